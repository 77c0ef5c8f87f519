import { randomBytes } from 'node:crypto';
import { kSessionIdPattern } from '../../../option-table.js';

/**
 * How a session's work is named in Redis. BullMQ refuses `:` in custom job ids (it
 * separates the parts of its keys), so the names are built from characters that cannot
 * hold one: a session id of `[A-Za-z0-9._-]`, run ids of hex digits, and task ids of the
 * same set as session ids (DESIGN.md section 3).
 */

/** What a session id may hold (`--session-id`'s type in the options table). */
export { kSessionIdPattern };

/** A run id: 12 hex digits (48 random bits), made by newRunId. */
export const kRunIdPattern = /^[0-9a-f]{12}$/;

/**
 * A new run id, one per coordinator run: it names the run's jobs and its hold on the
 * session id (session-lease.ts). 48 random bits: two runs of one session never draw the
 * same one in practice (a million runs of one session: about one chance in 500).
 */
export function newRunId(): string {
  return randomBytes(6).toString('hex');
}

/** The queue of one session: its workers take jobs from it, and Ctrl-C empties only it. */
export function queueNameOf(sessionId: string): string {
  return `csv-wave-${sessionId}`;
}

/**
 * The job of one attempt of one run: `<session>.r<run>.<task>.a<attempt>`. The run id makes
 * every run's jobs new, so no job id repeats across the runs of a session: attempt numbers
 * start at 1 in every run, and a finished job an earlier run never read (a coordinator
 * killed with kill -9) must not be taken for the reply of a later attempt (a `rerun`).
 * A `resume` awaits again only the jobs its journal names (BullmqBackend `reattach`).
 * Unique: the session id is the queue's, the run id has a fixed length, and the part after
 * the last `.a` is the attempt number (a task id with such a tail still gets its own
 * attempt suffix after it).
 */
export function jobIdOf(sessionId: string, runId: string, taskId: string, attempt: number): string {
  return `${runPrefixOf(sessionId, runId)}${taskId}.a${attempt}`;
}

/** The attempt a job of jobIdOf's is of (the number after its last `.a`); 1 for an id of another form. */
export function attemptOfJob(jobId: string): number {
  const attempt = Number(/\.a(\d+)$/.exec(jobId)?.[1] ?? 1);
  return Number.isSafeInteger(attempt) && attempt > 0 ? attempt : 1;
}

/** Whether a job of the session's queue is one of this run's. */
export function isJobOfRun(jobId: string, sessionId: string, runId: string): boolean {
  return jobId.startsWith(runPrefixOf(sessionId, runId));
}

function runPrefixOf(sessionId: string, runId: string): string {
  return `${sessionId}.r${runId}.`;
}

/** Whether a job id is one of this session's (of any run): a journal copied from another folder names another id's jobs. */
export function isJobOfSession(jobId: string, sessionId: string): boolean {
  return jobId.startsWith(`${sessionId}.r`) && kRunIdPattern.test(jobId.slice(sessionId.length + 2, sessionId.length + 14));
}
