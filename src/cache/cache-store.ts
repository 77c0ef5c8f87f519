import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { FinishedAttempt } from '../executors/messages.js';
import type { RequestUsage } from '../knowledge/usage.js';
import { CacheFolder, type PackFile } from '../session/files/cache-folder.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import { sha256 } from './canonical-json.js';
import { kCacheFormat } from './task-key.js';

/**
 * One cached result (docs/cache.md): the finished attempt as its executor returned it
 * (artifact contents and discovery record included), the model requests it took and what
 * they cost, the input parts it was made from and when.
 */
export interface CacheEntry {
  format: typeof kCacheFormat;
  key: string;
  /** The task that made it. */
  task: string;
  /** ISO 8601: when the result was made. */
  created_at: string;
  /** The input parts the key was made from: `[name, value]` pairs in the canonical order (task-key.ts TaskKey.inputs). */
  inputs: [string, string][];
  /** The reply, without the thread, tokens and requests of the attempt that made it. */
  reply: FinishedAttempt;
  /** The model requests that made it (usage.ndjson's lines), none for a command or module. */
  requests: RequestUsage[];
  /** What they cost in US dollars; null when some had tokens but no known price. */
  cost_usd: number | null;
}

/** Where an entry lies: its pack, and the bytes of its line. */
interface Location {
  pack: string;
  offset: number;
  length: number;
}

/** The first line of an index: its format and the size of the pack it indexes. */
const kIndexHeader = 'csv-wave-cache-index 1';
/** The first line of a uses file: the hits of a run, `<key> <hits> <ms since 1970>` a line (cache-housekeeping.ts reads them). */
export const kUsesHeader = 'csv-wave-cache-uses 1';
/** Pending entries are appended once they hold this many bytes (and at each flush). */
const kFlushBytes = 256 * 1024;
/** `<key> <digest> ` before an entry's JSON. */
export const kLinePrefix = /^([0-9a-f]{64}) ([0-9a-f]{64}) /;
export const kPrefixLength = 130;

/**
 * The result cache on disk: packs of entries, each pack written by one run, read by any.
 *
 * A pack (`packs/<name>.pack`) holds one line per entry: `<key> <digest> <entry JSON>`, the
 * digest the SHA-256 of the JSON's bytes. Its index (`<name>.index`), written whole when the
 * run closes the pack, says where each entry's line lies; a pack without one (its run was
 * killed, or still runs) is read line by line. An entry is read back only when a task asks
 * for its key, and used only when its line is whole, its digest right, and it holds the key
 * asked for in this format: anything else is a miss with a warning, never a wrong result.
 *
 * Entries are appended in batches and never made durable: a crash loses the last ones
 * (misses), and cuts at most a line (its digest fails). Writing one file per entry would
 * cost a run of 10,000 no-op tasks 13 to 80% more CPU here; a pack appends each entry in
 * less than a microsecond (docs/cache.md).
 */
export class CacheStore {
  readonly #folder: CacheFolder;
  readonly #warn: (message: string) => void;
  readonly #scrubber: SecretScrubber;
  #index: Map<string, Location> | undefined;
  /** This run's pack: made at its first entry; `index` holds each entry's key, offset and length. */
  #pack: { name: string; file: PackFile; index: (string | number)[] } | undefined;
  /** Entries not appended yet, written straight into one buffer. */
  #pending = Buffer.allocUnsafe(kFlushBytes * 2);
  #pendingBytes = 0;
  /** Entries of a busy run are made many to a millisecond: the time is formatted once. */
  #createdMs = Number.NaN;
  #createdAt = '';
  /** Set once a write failed: the rest of the run writes no entry. */
  #writeFailed = false;
  /** The keys this run took a result of, and how often: written as a uses file when it closes (the age `cache --prune` goes by). */
  readonly #hits = new Map<string, number>();

  constructor(folder: CacheFolder, warn: (message: string) => void, scrubber: SecretScrubber = SecretScrubber.fromEnv()) {
    this.#folder = folder;
    this.#warn = warn;
    this.#scrubber = scrubber;
  }

  /** The cache's folder. */
  get dir(): string {
    return this.#folder.dir;
  }

  /** Whether the cache holds no entry at all (a first run's): nothing to read. */
  isEmpty(): boolean {
    return this.#entries().size === 0;
  }

  /** Whether an entry of `key` may be there (read it to know). */
  has(key: string): boolean {
    return this.#entries().has(key);
  }

  /** The entry of `key`, checked; undefined on a miss (one that does not check is said, and forgotten). */
  read(key: string): CacheEntry | undefined {
    const location = this.#entries().get(key);
    if (location === undefined) return undefined;
    const problem = (why: string) => {
      this.#warn(`cache: the entry ${key.slice(0, 12)} in ${location.pack} ${why}: not used, the task runs`);
      this.#index?.delete(key);
      return undefined;
    };
    let line: string;
    try {
      line = readRange(join(this.#folder.packs, location.pack), location.offset, location.length);
    } catch (error) {
      return problem(`cannot be read (${(error as Error).message})`);
    }
    const prefix = kLinePrefix.exec(line);
    if (prefix === null || prefix[1] !== key || !line.endsWith('\n')) return problem('is cut short or not an entry');
    const json = line.slice(kPrefixLength, -1);
    if (sha256(json) !== prefix[2]) return problem('does not match its digest (cut short or changed)');
    let entry: unknown;
    try {
      entry = JSON.parse(json);
    } catch {
      return problem('is not JSON');
    }
    const shape = entryProblem(entry, key);
    if (shape !== undefined) return problem(shape);
    return entry as CacheEntry;
  }

  /** Records a hit of `key`: `cache --stats` counts it, and `cache --prune` takes the entry as used now. */
  noteHit(key: string): void {
    this.#hits.set(key, (this.#hits.get(key) ?? 0) + 1);
  }

  /**
   * Adds the entry of a completed result (scrubbed of the environment's secrets); a write
   * that fails is said once, and the run writes no more. `inputs` is the key's parts as
   * JSON text (TaskKey.inputs), scrubbed already. The entry is not seen by this run's own
   * look-ups: a task completes once per run, and its key names its id.
   */
  write(key: string, task: string, inputs: string, reply: FinishedAttempt, requests: readonly RequestUsage[], costUsd: number | null): void {
    if (this.#writeFailed) return;
    try {
      this.#pack ??= this.#newPack();
    } catch (error) {
      this.#failed(error);
      return;
    }
    const now = Date.now();
    if (now !== this.#createdMs) {
      this.#createdMs = now;
      this.#createdAt = new Date(now).toISOString();
    }
    // Spelled out (JSON.stringify's output of a CacheEntry): one entry per task of a run.
    const json =
      `{"format":"${kCacheFormat}","key":"${key}","task":${JSON.stringify(task)},"created_at":"${this.#createdAt}","inputs":${inputs}` +
      `,"reply":${JSON.stringify(this.#scrubber.deep(reply))},"requests":${JSON.stringify(this.#scrubber.deep(requests))},"cost_usd":${costUsd === null ? 'null' : JSON.stringify(costUsd)}}`;
    // `<key> <digest> <json>\n`, written into the pending buffer, the digest of the bytes written.
    const length = kPrefixLength + Buffer.byteLength(json) + 1;
    if (this.#pendingBytes + length > this.#pending.length) {
      this.flush();
      if (length > this.#pending.length) this.#pending = Buffer.allocUnsafe(length);
    }
    const at = this.#pendingBytes;
    const pending = this.#pending;
    pending.write(key, at, 'latin1');
    pending[at + 64] = 0x20;
    const jsonAt = at + kPrefixLength;
    const written = pending.write(json, jsonAt, 'utf8');
    pending.write(sha256(pending.subarray(jsonAt, jsonAt + written)), at + 65, 'latin1');
    pending[at + 129] = 0x20;
    pending[jsonAt + written] = 0x0a;
    this.#pack.index.push(key, this.#pack.file.size + at, length);
    this.#pendingBytes += length;
    if (this.#pendingBytes >= kFlushBytes) this.flush();
  }

  /** Appends the pending entries to the pack. */
  flush(): void {
    if (this.#pack === undefined || this.#pendingBytes === 0 || this.#writeFailed) return;
    const bytes = this.#pending.subarray(0, this.#pendingBytes);
    this.#pendingBytes = 0;
    try {
      this.#pack.file.append(bytes);
    } catch (error) {
      this.#failed(error);
    }
  }

  /** Flushes, closes the pack and writes its index; writes the run's hits as a uses file. */
  close(): void {
    this.flush();
    this.#writeUses();
    const pack = this.#pack;
    if (pack === undefined) return;
    this.#pack = undefined;
    try {
      pack.file.close();
      if (!this.#writeFailed) this.#folder.replace(indexName(pack.name), indexText(pack.file.size, pack.index));
    } catch (error) {
      this.#warn(`cache: the index of ${pack.name} was not written (${(error as Error).message}): the next run reads the pack itself`);
    }
  }

  #newPack(): { name: string; file: PackFile; index: (string | number)[] } {
    const name = packName(packStamp(new Date()), '.pack');
    return { name, file: this.#folder.createPack(name), index: [] };
  }

  /** The run's hits, in a file of their own (written whole, by a rename): a hit writes nothing else. */
  #writeUses(): void {
    if (this.#hits.size === 0) return;
    const now = Date.now();
    const lines = [`${kUsesHeader}\n`];
    for (const [key, hits] of this.#hits) lines.push(`${key} ${hits} ${now}\n`);
    this.#hits.clear();
    try {
      this.#folder.replace(packName(packStamp(new Date(now)), '.uses'), lines.join(''));
    } catch (error) {
      this.#warn(`cache: the hits of this run were not recorded (${(error as Error).message}): cache --prune takes their entries as unused since written`);
    }
  }

  #failed(error: unknown): void {
    this.#writeFailed = true;
    this.#pendingBytes = 0;
    this.#warn(`cache: results are no longer written to ${this.#folder.dir} in this run: ${(error as Error).message}`);
  }

  /** The index of every pack, read at the first look-up; later packs win for a key in two. */
  #entries(): Map<string, Location> {
    if (this.#index !== undefined) return this.#index;
    const index = new Map<string, Location>();
    this.#index = index;
    let names: string[];
    try {
      names = existsSync(this.#folder.packs) ? readdirSync(this.#folder.packs).filter((name) => name.endsWith('.pack')).sort() : [];
    } catch (error) {
      this.#warn(`cache: ${this.#folder.packs} cannot be read (${(error as Error).message}): every task runs`);
      return index;
    }
    for (const name of names) {
      try {
        readPackIndex(this.#folder.packs, name, index, this.#warn);
      } catch (error) {
        this.#warn(`cache: ${name} cannot be read (${(error as Error).message}): its entries are not used`);
      }
    }
    return index;
  }
}

/** The time part of a pack's name: packs sort by it. */
export function packStamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

/** A file name of the packs' folder: sorted by age (`stamp`), unique across processes and hosts sharing a folder. */
export function packName(stamp: string, extension: '.pack' | '.uses'): string {
  return `${stamp}-${process.pid}-${randomBytes(4).toString('hex')}${extension}`;
}

/** An index's text: its header with the pack's size, then `<key> <offset> <length>` per entry. */
export function indexText(size: number, index: readonly (string | number)[]): string {
  const lines = [`${kIndexHeader} ${size}\n`];
  for (let i = 0; i < index.length; i += 3) lines.push(`${index[i]} ${index[i + 1]} ${index[i + 2]}\n`);
  return lines.join('');
}

/** The index file of a pack. */
export function indexName(pack: string): string {
  return `${pack.slice(0, -'.pack'.length)}.index`;
}

/** Adds the entries of one pack to `index`: from its index file when it has a good one, else from its lines. */
function readPackIndex(folder: string, name: string, index: Map<string, Location>, warn: (message: string) => void): void {
  const indexPath = join(folder, indexName(name));
  if (existsSync(indexPath)) {
    const lines = readFileSync(indexPath, 'utf8').split('\n');
    if (lines[0]?.startsWith(`${kIndexHeader} `) === true) {
      for (const line of lines.slice(1)) {
        const [key, offset, length] = line.split(' ');
        if (key !== undefined && key.length === 64 && offset !== undefined && length !== undefined) {
          index.set(key, { pack: name, offset: Number(offset), length: Number(length) });
        }
      }
      return;
    }
  }
  // No index: the run that wrote the pack was killed, or is still writing it.
  const bytes = readFileSync(join(folder, name));
  let offset = 0;
  let broken = 0;
  while (offset < bytes.length) {
    const end = bytes.indexOf(0x0a, offset);
    // A last line without its end: a write cut short (or going on); it is not an entry.
    if (end < 0) break;
    const prefix = bytes.toString('latin1', offset, Math.min(end, offset + kPrefixLength));
    const match = kLinePrefix.exec(prefix);
    if (match !== null) index.set(match[1]!, { pack: name, offset, length: end + 1 - offset });
    else broken++;
    offset = end + 1;
  }
  if (broken > 0) warn(`cache: ${broken} line(s) of ${name} are no entries: not used`);
}

/** `length` bytes of a file from `offset`, as UTF-8 text. */
function readRange(path: string, offset: number, length: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = readSync(fd, buffer, read, length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

/** Why a parsed entry cannot be used for `key`; undefined when it can. Its reply is checked again when used (result-cache.ts). */
function entryProblem(entry: unknown, key: string): string | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return 'is not an entry';
  const fields = entry as Record<string, unknown>;
  if (fields['format'] !== kCacheFormat) return `is of another format (${String(fields['format'])}, this csv-wave reads ${kCacheFormat})`;
  if (fields['key'] !== key) return 'holds another key';
  const reply = fields['reply'] as Record<string, unknown> | null;
  if (reply === null || typeof reply !== 'object' || reply['kind'] !== 'finished' || reply['status'] !== 'completed') return 'holds no completed result';
  if (typeof fields['created_at'] !== 'string' || typeof fields['task'] !== 'string') return 'is not an entry';
  if (!Array.isArray(fields['requests']) || !Array.isArray(fields['inputs'])) return 'is not an entry';
  const cost = fields['cost_usd'];
  if (cost !== null && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0)) return 'is not an entry';
  return undefined;
}
