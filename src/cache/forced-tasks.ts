import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout, type SessionFileWriter } from '../layout.js';

/**
 * The tasks a rerun chose, which execute rather than take a cached result (`--task`,
 * `--wave`, the failed ones of `--failed`, the stale ones of `--stale`): kept in
 * `.csv-wave/forced.json`, written whole by a rename before the rerun starts anything, so
 * that a rerun interrupted and resumed still executes them. A task leaves the list once it
 * ran: each run writes the list again when it ends, with only those still pending.
 */
export function writeForcedTasks(files: SessionFileWriter, ids: readonly string[]): void {
  files.replace(kLayout.forced, `${JSON.stringify({ tasks: ids })}\n`);
}

/** The tasks a rerun forced and that have not run yet; empty when there are none (or the file cannot be read). */
export function readForcedTasks(sessionDir: string): string[] {
  try {
    const parsed = JSON.parse(readFileSync(join(sessionDir, kLayout.forced), 'utf8')) as { tasks?: unknown };
    return Array.isArray(parsed.tasks) ? parsed.tasks.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
