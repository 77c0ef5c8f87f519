import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout, type SessionFileWriter } from '../layout.js';

export interface CacheEntry {
  angle: string;
  file: string;
  created_by: string;
  timestamp: string;
}

interface CachedExploration {
  angle: string;
  task_id: string;
  findings: string;
  timestamp: string;
}

/** The names of the files this cache writes: a name from the index is read only if it is one. */
const kCacheFilePattern = /^explore-[a-z0-9-]+\.json$/;

/** An angle as a cache key: kebab-case, so that "Competitor Analysis" and "competitor_analysis" meet. */
export function angleKey(angle: string): string {
  return angle
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The exploration cache of seed 000: an explorer task whose angle was explored before in
 * the session reuses that result instead of exploring again. Entries never expire within
 * a session; only the task that created an entry writes it (the engine is the one writer).
 */
export class ExplorationCache {
  readonly #files: SessionFileWriter;
  readonly #folder: string;
  readonly #entries = new Map<string, CacheEntry>();

  constructor(files: SessionFileWriter) {
    this.#files = files;
    this.#folder = join(files.dir, kLayout.explorations);
    const index = join(this.#folder, 'cache-index.json');
    if (existsSync(index)) {
      try {
        const parsed = JSON.parse(readFileSync(index, 'utf8')) as { entries?: CacheEntry[] };
        for (const entry of parsed.entries ?? []) this.#entries.set(angleKey(entry.angle), entry);
      } catch {
        // An unreadable index is rebuilt from the next exploration.
      }
    }
  }

  /** The cached findings for an angle, and who explored it. */
  lookup(angle: string): { findings: string; createdBy: string } | undefined {
    const key = angleKey(angle);
    const entry = key === '' ? undefined : this.#entries.get(key);
    // The index is a file of the session: a name in it that is not one this cache writes is not read.
    if (!entry || !kCacheFilePattern.test(entry.file)) return undefined;
    try {
      const cached = JSON.parse(readFileSync(join(this.#folder, entry.file), 'utf8')) as CachedExploration;
      return { findings: cached.findings, createdBy: entry.created_by };
    } catch {
      return undefined;
    }
  }

  store(angle: string, taskId: string, findings: string): void {
    const key = angleKey(angle);
    if (key === '' || this.#entries.has(key)) return;
    const timestamp = new Date().toISOString();
    // The key is kebab-case ([a-z0-9-]), so the file name cannot climb out; the folder may be a symlink.
    const file = `explore-${key}.json`;
    const record: CachedExploration = { angle, task_id: taskId, findings, timestamp };
    this.#files.write(join(kLayout.explorations, file), `${JSON.stringify(record, null, 2)}\n`);
    this.#entries.set(key, { angle: key, file, created_by: taskId, timestamp });
    this.#files.replace(join(kLayout.explorations, 'cache-index.json'), `${JSON.stringify({ entries: [...this.#entries.values()] }, null, 2)}\n`);
  }
}
