import { statusOf } from '../core/skip-cause.js';
import type { TaskRow } from '../core/task.js';
import type { JournalEntry, JournalStart } from '../session/journal.js';

/** A start entry that names its job. */
export type JobStart = JournalStart & { job: string };

/**
 * The jobs an interrupted run left (--backend bullmq) that this run awaits again: for each
 * task, the journal's last start entry naming a job, when the task did not finish after it,
 * is pending now and is not one this run resets (a `rerun` runs its tasks afresh). Only an
 * attempt 1: a run's first attempt of a task is attempt 1, and a job of a later attempt was
 * asked for another attempt (its number, its thread), so no attempt of this run is its own.
 * Every other job left in the session's queue is nobody's, and is removed when the run
 * starts (session-jobs.ts).
 */
export function jobsToReattach(entries: readonly JournalEntry[], rows: readonly TaskRow[], reset: ReadonlySet<string>): JobStart[] {
  const pending = new Set(rows.filter((row) => statusOf(row) === 'pending' && !reset.has(row.id)).map((row) => row.id));
  return [...openStarts(entries).values()].filter((start): start is JobStart => start.job !== undefined && start.attempt === 1 && pending.has(start.id));
}

/**
 * The job of each task's attempt out, by task id, as the journal names it (--backend bullmq):
 * its last start entry naming a job, when it did not finish after it. A running run's
 * journal holds one for every task it has out as a job (it writes them again after each
 * checkpoint), and for an attempt its coordinator runs itself (an interactive task's), whose
 * job is never added. `status` asks Redis where these jobs are: waiting, or run by a worker.
 */
export function jobsOut(entries: readonly JournalEntry[]): Map<string, string> {
  const jobs = new Map<string, string>();
  for (const [id, start] of openStarts(entries)) if (start.job !== undefined) jobs.set(id, start.job);
  return jobs;
}

/** Each task's last start entry, when it did not finish after it. */
function openStarts(entries: readonly JournalEntry[]): Map<string, JournalStart> {
  const open = new Map<string, JournalStart>();
  for (const entry of entries) {
    if (entry.type === 'start') open.set(entry.id, entry);
    else if (entry.type === 'finish') open.delete(entry.id);
  }
  return open;
}
