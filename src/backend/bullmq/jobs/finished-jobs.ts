import type { Queue } from 'bullmq';
import type { ClientContext, Redis, Result } from 'ioredis';

/**
 * How long a finished job nobody read stays in Redis. A coordinator removes each job once it
 * has read the reply; one killed with kill -9 before it did leaves the job for a `resume` to
 * merge, and this long only. BullMQ's own `removeOnComplete: {age}` is applied only when
 * another job of the queue completes, which never happens in the queue of a session whose
 * coordinator is gone: so the worker that finished the job sets the expiry itself.
 */
export const kKeepFinishedMs = 24 * 3600 * 1000;

/**
 * How long finished jobs gather before their expiry goes out: one write for all of them
 * instead of one round trip per job (8% of a busy worker's main thread in its profile).
 */
const kGatherMs = 50;

/** The command registered on the worker's connection (a Lua script: one round trip, all keys at once). */
const kCommand = 'csvWaveKeepFinished';
/**
 * The sets of finished jobs and the event stream (KEYS), and the hash of each job named
 * (ARGV[3] on, under the queue's key prefix ARGV[2], as BullMQ's own scripts build them),
 * expire ARGV[1] ms from now.
 */
const kScript = `
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
for index = 3, #ARGV do redis.call('PEXPIRE', ARGV[2] .. ARGV[index], ARGV[1]) end
return 1
`;

/** The connections the script is defined on. */
const defined = new WeakSet<object>();

/**
 * Makes the jobs that just finished leave Redis kKeepFinishedMs from now, unless a
 * coordinator removes them before: each one's hash (data and reply), and with them the sets
 * of finished jobs (completed, failed) and the queue's event stream (which repeats
 * replies), whose expiry each finish pushes back, so they go a day after the queue's last
 * finish. The jobs finished within kGatherMs go in one write. A worker killed before that
 * write leaves its jobs to the next run's clean-up (session-jobs.ts).
 */
export class FinishedJobs {
  readonly #queue: Queue;
  #jobs: string[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(queue: Queue) {
    this.#queue = queue;
  }

  /** Job `jobId` finished (completed or failed): its expiry goes out with the next write. */
  add(jobId: string): void {
    this.#jobs.push(jobId);
    this.#timer ??= setTimeout(() => void this.flush().catch(() => undefined), kGatherMs);
  }

  /** Sends the expiries gathered so far (at once, as a worker closes). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#jobs.length === 0) return;
    const ids = this.#jobs;
    this.#jobs = [];
    const client = await this.#queue.getBackend().client;
    // Once per connection: a definition hashes the script and adds methods to the client.
    if (!defined.has(client)) {
      client.defineCommand(kCommand, { numberOfKeys: 3, lua: kScript });
      defined.add(client);
    }
    const queue = this.#queue;
    await client.runCommand(kCommand, [queue.toKey('completed'), queue.toKey('failed'), queue.toKey('events'), kKeepFinishedMs, queue.toKey(''), ...ids]);
  }

  /** Drops what was gathered (the worker stops at once: its connections are dropped). */
  drop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#jobs = [];
  }
}

declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext> {
    csvWaveRemoveFinished(completed: string, failed: string, prefix: string, ...ids: string[]): Result<string[], Context>;
  }
}

/**
 * Removes the named jobs that are finished (in the completed or the failed set: BullMQ's
 * own removal looks there first) with their keys, as BullMQ's removal does for a job with
 * no parent, children or deduplication (csv-wave's jobs have none), and returns the ids of
 * the others: those are left to BullMQ's removal, which knows every other state.
 */
const kRemoveScript = `
local others = {}
for index = 2, #ARGV do
  local id = ARGV[index]
  local set = nil
  if redis.call('ZSCORE', KEYS[1], id) then set = KEYS[1] elseif redis.call('ZSCORE', KEYS[2], id) then set = KEYS[2] end
  if set then
    redis.call('ZREM', set, id)
    local key = ARGV[1] .. id
    redis.call('DEL', key, key .. ':logs', key .. ':dependencies', key .. ':processed', key .. ':failed', key .. ':unsuccessful')
  else
    others[#others + 1] = id
  end
end
return others
`;

const removalDefined = new WeakSet<Redis>();

/**
 * Removes jobs whose replies were read: the finished ones with one script for all (one
 * command where BullMQ's `remove` is one script per job, each adding a `removed` event to
 * the stream that the coordinator then reads back), the others (a job whose add failed may
 * wait in Redis all the same) with BullMQ's removal, which leaves a job a worker runs.
 */
export async function removeReadJobs(redis: Redis, queue: Queue, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  if (!removalDefined.has(redis)) {
    redis.defineCommand('csvWaveRemoveFinished', { numberOfKeys: 2, lua: kRemoveScript });
    removalDefined.add(redis);
  }
  const others = await redis.csvWaveRemoveFinished(queue.toKey('completed'), queue.toKey('failed'), queue.toKey(''), ...ids);
  await Promise.all(others.map((id) => queue.remove(id).catch(() => undefined)));
}
