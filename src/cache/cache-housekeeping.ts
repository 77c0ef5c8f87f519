import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CacheFolder } from '../session/files/cache-folder.js';
import { sha256 } from './canonical-json.js';
import { indexName, indexText, kLinePrefix, kPrefixLength, kUsesHeader, packName } from './cache-store.js';
import { kCacheFormat } from './task-key.js';

/** An entry's line in its pack's index, `<key> <offset> <length>`, at most: `--max-size` counts it with the entry. */
const kIndexLineBytes = 64 + 1 + 12 + 1 + 9 + 1;

/** What `csv-wave cache --stats` says of a cache's folder (docs/cache.md). */
export interface CacheStats {
  /** The cache's folder, absolute. */
  dir: string;
  /** Entries that read as valid, each key counted once. */
  entries: number;
  /** The bytes of every file of the packs' folder. */
  bytes: number;
  packs: number;
  /** Lines of packs that are no valid entry (cut short by a crash, or changed): `--prune` removes them. */
  broken: number;
  /** ISO 8601: when the oldest and the newest entry were written; absent for an empty cache. */
  oldest?: string;
  newest?: string;
  /** Results runs took from the cache, as their uses files recorded them. */
  hits: number;
  /** ISO 8601: the last of those hits. */
  last_hit?: string;
}

/** Which entries `cache --prune` removes: those not used for `olderThanMs`, then the least recently used beyond `maxBytes`. */
export interface PruneLimits {
  olderThanMs?: number;
  maxBytes?: number;
}

export interface PruneResult {
  /** Entries removed, and entries kept. */
  removed: number;
  kept: number;
  /** The bytes of the packs' folder before and after. */
  bytes_before: number;
  bytes_after: number;
}

/** A valid entry as housekeeping sees it: its line's bytes, where it lies, when it was written and last used. */
interface ScannedEntry {
  key: string;
  pack: string;
  line: Buffer;
  createdMs: number;
  usedMs: number;
}

interface ScannedPack {
  name: string;
  /** Its valid entries, in its order. */
  entries: ScannedEntry[];
  broken: number;
}

interface Scan {
  packs: ScannedPack[];
  /** The latest valid entry of each key: a later pack wins, as the run's look-up does. */
  latest: Map<string, ScannedEntry>;
  uses: Map<string, { hits: number; ms: number }>;
  /** The uses files read, the index files without a pack, and every file of the folder. */
  usesFiles: string[];
  orphans: string[];
  files: string[];
  bytes: number;
}

/** What the cache's folder holds (`cache --stats`). */
export function cacheStats(folder: CacheFolder): CacheStats {
  const scan = scanCache(folder);
  let oldest = Number.POSITIVE_INFINITY;
  let newest = Number.NEGATIVE_INFINITY;
  for (const entry of scan.latest.values()) {
    oldest = Math.min(oldest, entry.createdMs);
    newest = Math.max(newest, entry.createdMs);
  }
  let hits = 0;
  let lastHit = Number.NEGATIVE_INFINITY;
  for (const use of scan.uses.values()) {
    hits += use.hits;
    lastHit = Math.max(lastHit, use.ms);
  }
  return {
    dir: folder.dir,
    entries: scan.latest.size,
    bytes: scan.bytes,
    packs: scan.packs.length,
    broken: scan.packs.reduce((sum, pack) => sum + pack.broken, 0),
    ...(scan.latest.size === 0 ? {} : { oldest: new Date(oldest).toISOString(), newest: new Date(newest).toISOString() }),
    hits,
    ...(hits === 0 ? {} : { last_hit: new Date(lastHit).toISOString() }),
  };
}

/**
 * Removes the entries not used (taken by a run, else written) for `olderThanMs`, then the
 * least recently used until the packs hold at most `maxBytes`; also lines that are no valid
 * entry, older copies of a key and indexes whose pack is gone. A pack that keeps all its
 * entries is left as it is (a run may still be appending to it); another is rewritten.
 *
 * Safe against a run at the same time and a kill at any point: a pack's kept entries are
 * written to a new pack and its index (each whole, by a rename) before the old index and
 * the old pack are removed. A run that reads the old pack after that finds no file, or
 * no entry of its key where its index said: a miss, never a wrong result.
 */
export function pruneCache(folder: CacheFolder, limits: PruneLimits, now: number): PruneResult {
  const scan = scanCache(folder);
  const kept = new Set<ScannedEntry>();
  const byUse = [...scan.latest.values()].sort((a, b) => b.usedMs - a.usedMs);
  let bytes = 0;
  for (const entry of byUse) {
    if (limits.olderThanMs !== undefined && entry.usedMs < now - limits.olderThanMs) continue;
    const size = entry.line.length + kIndexLineBytes;
    if (limits.maxBytes !== undefined && bytes + size > limits.maxBytes) break;
    bytes += size;
    kept.add(entry);
  }
  for (const pack of scan.packs) {
    const keep = pack.entries.filter((entry) => kept.has(entry));
    if (keep.length === pack.entries.length && pack.broken === 0) continue;
    if (keep.length > 0) writePack(folder, pack.name, keep);
    folder.remove(indexName(pack.name));
    folder.remove(pack.name);
  }
  for (const orphan of scan.orphans) folder.remove(orphan);
  // The hits of the entries kept, in one uses file written before the ones it replaces go.
  const uses = [...kept].flatMap((entry) => {
    const use = scan.uses.get(entry.key);
    return use === undefined ? [] : [`${entry.key} ${use.hits} ${use.ms}\n`];
  });
  if (uses.length > 0) folder.replace(packName(stampOf(scan.usesFiles.at(-1)!), '.uses'), `${kUsesHeader}\n${uses.join('')}`);
  for (const name of scan.usesFiles) folder.remove(name);
  return { removed: scan.latest.size - kept.size, kept: kept.size, bytes_before: scan.bytes, bytes_after: folderBytes(folder) };
}

/** Removes every file of the cache's packs' folder; a run writing now loses what it writes (misses). The entries it removed. */
export function clearCache(folder: CacheFolder): number {
  const scan = scanCache(folder);
  for (const name of scan.files) folder.remove(name);
  return scan.latest.size;
}

/** Writes `entries` of pack `name` as a new pack, sorted where the old one was, with its index. */
function writePack(folder: CacheFolder, name: string, entries: readonly ScannedEntry[]): void {
  const fresh = packName(stampOf(name), '.pack');
  const index: (string | number)[] = [];
  let offset = 0;
  for (const entry of entries) {
    index.push(entry.key, offset, entry.line.length);
    offset += entry.line.length;
  }
  folder.replace(fresh, Buffer.concat(entries.map((entry) => entry.line)));
  folder.replace(indexName(fresh), indexText(offset, index));
}

/** The time part of a pack's or uses file's name. */
function stampOf(name: string): string {
  return name.slice(0, name.indexOf('-'));
}

function scanCache(folder: CacheFolder): Scan {
  const dir = folder.packs;
  const files = existsSync(dir) ? readdirSync(dir).sort() : [];
  const names = new Set(files);
  const scan: Scan = { packs: [], latest: new Map(), uses: new Map(), usesFiles: [], orphans: [], files, bytes: 0 };
  for (const name of files) {
    const path = join(dir, name);
    try {
      scan.bytes += statSync(path).size;
      if (name.endsWith('.pack')) scan.packs.push(scanPack(path, name, scan.latest));
      else if (name.endsWith('.index') && !names.has(`${name.slice(0, -'.index'.length)}.pack`)) scan.orphans.push(name);
      else if (name.endsWith('.uses')) {
        readUses(path, scan.uses);
        scan.usesFiles.push(name);
      }
    } catch (error) {
      // Renamed or removed since the listing: a run's temporary file, or another prune's work.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  for (const [key, use] of scan.uses) {
    const entry = scan.latest.get(key);
    if (entry !== undefined) entry.usedMs = Math.max(entry.usedMs, use.ms);
  }
  return scan;
}

/** The valid entries of a pack, each checked as a look-up checks it (whole line, digest, key, format). */
function scanPack(path: string, name: string, latest: Map<string, ScannedEntry>): ScannedPack {
  const bytes = readFileSync(path);
  const pack: ScannedPack = { name, entries: [], broken: 0 };
  let offset = 0;
  while (offset < bytes.length) {
    const end = bytes.indexOf(0x0a, offset);
    // A last line without its end is being written by a run, or was cut by a kill: neither is counted.
    if (end < 0) break;
    const line = bytes.subarray(offset, end + 1);
    offset = end + 1;
    const entry = checkedEntry(line, name);
    if (entry === undefined) pack.broken++;
    else {
      pack.entries.push(entry);
      latest.set(entry.key, entry);
    }
  }
  return pack;
}

function checkedEntry(line: Buffer, pack: string): ScannedEntry | undefined {
  const prefix = kLinePrefix.exec(line.toString('latin1', 0, kPrefixLength));
  if (prefix === null) return undefined;
  const json = line.subarray(kPrefixLength, line.length - 1);
  if (sha256(json) !== prefix[2]) return undefined;
  let entry: { format?: unknown; key?: unknown; created_at?: unknown };
  try {
    entry = JSON.parse(json.toString('utf8')) as typeof entry;
  } catch {
    return undefined;
  }
  const createdMs = typeof entry.created_at === 'string' ? Date.parse(entry.created_at) : Number.NaN;
  if (entry.format !== kCacheFormat || entry.key !== prefix[1] || Number.isNaN(createdMs)) return undefined;
  return { key: prefix[1]!, pack, line, createdMs, usedMs: createdMs };
}

function readUses(path: string, uses: Map<string, { hits: number; ms: number }>): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines[0] !== kUsesHeader) return;
  for (const line of lines.slice(1)) {
    const [key, hits, ms] = line.split(' ');
    if (key?.length !== 64 || !Number.isSafeInteger(Number(hits)) || !Number.isSafeInteger(Number(ms))) continue;
    const use = uses.get(key);
    uses.set(key, { hits: (use?.hits ?? 0) + Number(hits), ms: Math.max(use?.ms ?? 0, Number(ms)) });
  }
}

function folderBytes(folder: CacheFolder): number {
  if (!existsSync(folder.packs)) return 0;
  return readdirSync(folder.packs).reduce((sum, name) => sum + statSync(join(folder.packs, name)).size, 0);
}
