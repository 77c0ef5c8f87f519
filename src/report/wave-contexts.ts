import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { unguardCell } from '../text/formula-guard.js';
import type { FileFormat } from '../csv/tasks-table.js';

interface Parsed {
  /** The file as it was when parsed: a wave file is replaced (renamed over), never edited in place by the engine. */
  ino: number;
  size: number;
  mtimeMs: number;
  delimiter: string;
  /** prev_context by task id, unguarded. */
  contexts: Map<string, string>;
}

/**
 * The prev_context cells of a session's wave files. A run rewrites report.html at every
 * wave end and at its end; without this cache each rewrite parsed every wave file again,
 * which at 30,000 tasks in 10 waves was most of the report's time on the engine's main
 * thread. A file is parsed again when its inode, size or modification time changed.
 */
export class WaveContexts {
  readonly #parsed = new Map<string, Parsed>();

  /** prev_context by task id from every wave-<N>.csv (a later wave file wins: it is the newer run). */
  read(sessionDir: string, format: FileFormat): Map<string, string> {
    const delimiter = format.delimiter ?? ',';
    const found = new Map<string, string>();
    const names = readdirSync(sessionDir)
      .filter((name) => /^wave-\d+\.csv$/.test(name))
      .sort((a, b) => Number(a.slice(5, -4)) - Number(b.slice(5, -4)));
    const seen = new Set(names);
    for (const name of this.#parsed.keys()) if (!seen.has(name)) this.#parsed.delete(name);
    for (const name of names) {
      const contexts = this.#contexts(join(sessionDir, name), name, delimiter);
      if (contexts) for (const [id, text] of contexts) found.set(id, text);
    }
    return found;
  }

  /**
   * A wave file the run just wrote, with the prev_context cells it holds (as written,
   * before the formula guard): it will not be parsed, unless it changes.
   */
  written(path: string, name: string, format: FileFormat, contexts: Map<string, string>): void {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      this.#parsed.delete(name);
      return;
    }
    this.#parsed.set(name, { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, delimiter: format.delimiter ?? ',', contexts });
  }

  /** Undefined for a file that cannot be read or parsed (a person broke it): the report shows the rest. */
  #contexts(path: string, name: string, delimiter: string): Map<string, string> | undefined {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      this.#parsed.delete(name);
      return undefined;
    }
    const known = this.#parsed.get(name);
    if (known && known.ino === stat.ino && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.delimiter === delimiter) {
      return known.contexts;
    }
    this.#parsed.delete(name);
    let records: Record<string, string>[];
    try {
      records = parse(readFileSync(path, 'utf8'), { columns: true, bom: true, delimiter, relax_column_count: true }) as Record<string, string>[];
    } catch {
      return undefined;
    }
    const contexts = new Map<string, string>();
    for (const record of records) {
      if (record['id'] !== undefined && record['prev_context'] !== undefined) contexts.set(record['id'], unguardCell(record['prev_context']));
    }
    this.#parsed.set(name, { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, delimiter, contexts });
    return contexts;
  }
}
