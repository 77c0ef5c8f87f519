import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Shell prefix for a task command that records each execution: the task id appended to
 * `runs.log` in the session folder (`>>` opens with O_APPEND, so concurrent tasks never
 * overwrite each other's lines). Commands run with the session folder as working folder.
 */
export const kLogRun = 'echo "$CSV_WAVE_TASK_ID" >> runs.log';

/**
 * Shell commands that record an execution's start and end, tagged with the run that
 * started it (the `CSV_WAVE_TEST_RUN` environment variable of the csv-wave process, which
 * commands inherit): `<id> <run> start` and `<id> <run> end` lines in `log` (a path).
 * The order of the lines is the order of the events.
 */
export function taggedLogCommands(log = 'runs.log'): { start: string; end: string } {
  const line = (phase: string) => `echo "$CSV_WAVE_TASK_ID \${CSV_WAVE_TEST_RUN:-0} ${phase}" >> ${log}`;
  return { start: line('start'), end: line('end') };
}

/** One line of a tagged log. */
export interface LoggedEvent {
  id: string;
  run: number;
  phase: 'start' | 'end';
}

/** The lines of a log written by `taggedLogCommands`, in order. */
export function readTaggedLog(path: string): LoggedEvent[] {
  if (!existsSync(path)) return [];
  const events: LoggedEvent[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [id, run, phase] = line.split(' ');
    if (id && run && (phase === 'start' || phase === 'end')) events.push({ id, run: Number(run), phase });
  }
  return events;
}

/**
 * How many times each task ran, from the session's runs.log (or another log): a plain
 * line is one execution, and so is a tagged `start` line.
 */
export function countRuns(sessionDir: string, log = join(sessionDir, 'runs.log')): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(log)) return counts;
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    const [id, , phase] = line.split(' ');
    if (!id || (phase !== undefined && phase !== 'start')) continue;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
