import type { Queue } from 'bullmq';

/**
 * How long a finished job nobody read stays in Redis. A coordinator removes each job once it
 * has read the reply; one killed with kill -9 before it did leaves the job for a `resume` to
 * merge, and this long only. BullMQ's own `removeOnComplete: {age}` is applied only when
 * another job of the queue completes, which never happens in the queue of a session whose
 * coordinator is gone: so the worker that finished the job sets the expiry itself.
 */
export const kKeepFinishedMs = 24 * 3600 * 1000;

/** The command registered on the worker's connection (a Lua script: one round trip, all keys at once). */
const kCommand = 'csvWaveKeepFinished';
/** The job's hash, the set of jobs finished so, and the queue's event stream expire ARGV[1] ms from now. */
const kScript = `
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return 1
`;

/**
 * Makes a job that just finished leave Redis kKeepFinishedMs from now, unless a coordinator
 * removes it before: its hash (data and reply), and with it the set it is listed in
 * (completed or failed) and the queue's event stream (which repeats replies), whose expiry
 * each finish pushes back, so they go a day after the queue's last finish. A worker killed
 * between the finish and this leaves that job to the next run's clean-up (session-jobs.ts).
 */
export async function expireFinishedJob(queue: Queue, jobId: string, state: 'completed' | 'failed'): Promise<void> {
  const client = await queue.getBackend().client;
  client.defineCommand(kCommand, { numberOfKeys: 3, lua: kScript });
  await client.runCommand(kCommand, [queue.toKey(jobId), queue.toKey(state), queue.toKey('events'), kKeepFinishedMs]);
}
