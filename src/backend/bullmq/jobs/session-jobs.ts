import type { JobType, Queue } from 'bullmq';

/** Every state a job of a session's queue can be in. */
const kStates: JobType[] = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children', 'completed', 'failed'];
/** Removals sent at once: a queue left with 100,000 jobs is swept in slices of pipelined scripts. */
const kRemoveBatch = 1000;

/** What a sweep did. */
export interface SweepResult {
  /** Jobs removed: waiting ones no worker will now start, finished ones whose replies nobody will read. */
  removed: number;
  /** Jobs a worker runs now (BullMQ removes no locked job): they run to their end, their replies unread. */
  running: number;
}

/**
 * Removes the jobs of the session's queue that no attempt awaits. The queue is the
 * session's own and one coordinator at a time holds the session (session-lease.ts), so a
 * job not awaited is one nobody will read: a finished job whose coordinator was killed
 * before it read the reply, a job of an attempt a resume does not take up again (an
 * attempt after the first), a job left by a copy of the folder that shared the id. Done
 * when a run starts, before its first job is added, and when it ends.
 *
 * @param awaited whether a job id is one this run awaits or may await (its own, or one a
 *   resume re-attaches to)
 */
export async function removeUnawaitedJobs(queue: Pick<Queue, 'getRanges' | 'remove'>, awaited: (id: string) => boolean): Promise<SweepResult> {
  const unawaited = (await queue.getRanges(kStates, 0, -1)).filter((id) => !awaited(id));
  const result: SweepResult = { removed: 0, running: 0 };
  for (let start = 0; start < unawaited.length; start += kRemoveBatch) {
    // 1: removed; 0: locked by the worker that runs it. Another code (already gone) counts as neither.
    const codes = await Promise.all(unawaited.slice(start, start + kRemoveBatch).map((id) => queue.remove(id).catch(() => -1)));
    for (const code of codes) {
      if (code === 1) result.removed++;
      else if (code === 0) result.running++;
    }
  }
  return result;
}
