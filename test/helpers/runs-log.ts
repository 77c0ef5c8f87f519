import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Shell prefix for a task command that records each execution: the task id appended to
 * `runs.log` in the session folder (`>>` opens with O_APPEND, so concurrent tasks never
 * overwrite each other's lines). Commands run with the session folder as working folder.
 */
export const kLogRun = 'echo "$CSV_WAVE_TASK_ID" >> runs.log';

/** How many times each task ran, from the session's runs.log. */
export function countRuns(sessionDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const path = join(sessionDir, 'runs.log');
  if (!existsSync(path)) return counts;
  for (const id of readFileSync(path, 'utf8').split('\n')) {
    if (id !== '') counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
