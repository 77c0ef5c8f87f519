/**
 * How a session's work is named in Redis. BullMQ refuses `:` in custom job ids (it
 * separates the parts of its keys), so the names are built from characters that cannot
 * hold one: a session id of `[A-Za-z0-9._-]` and task ids of the same set (DESIGN.md section 3).
 */

/** What a session id may hold: what a task id may hold, so that it names a queue and a job safely. */
export const kSessionIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The queue of one session: its workers take jobs from it, and Ctrl-C empties only it. */
export function queueNameOf(sessionId: string): string {
  return `csv-wave-${sessionId}`;
}

/**
 * The job of one attempt: the same session, task and attempt always give the same id, so
 * that a coordinator that starts again (resume after kill -9) finds the job it added before
 * instead of adding it twice (BullMQ ignores an add whose id exists). Unique: the part
 * after the last `.a` is the attempt number, and task ids hold no such number-only tail
 * that could be mistaken for it, as the attempt is always last.
 */
export function jobIdOf(sessionId: string, taskId: string, attempt: number): string {
  return `${sessionId}.${taskId}.a${attempt}`;
}
