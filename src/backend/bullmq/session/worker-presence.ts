import { Queue, QueueKeys } from 'bullmq';
import { Redis } from 'ioredis';
import { showCell } from '../../../csv/columns.js';
import { checkRedisReachable } from '../redis/connection.js';
import { queueNameOf } from '../jobs/names.js';

/**
 * Which worker runs which job, and which workers listen to a session's queue. A worker
 * names itself `<host>:<pid>` (bullmq-worker.ts): BullMQ keeps that name in every job it
 * takes (processedBy) and on the worker's Redis connections (CLIENT SETNAME), so both are
 * read from Redis, with nothing of csv-wave's own.
 */

/** The worker as `status` shows it: `host <host> pid <pid>`. */
export function workerShown(name: string): string {
  const cut = name.lastIndexOf(':');
  return cut < 0 ? name : `host ${name.slice(0, cut)} pid ${name.slice(cut + 1)}`;
}

/** Where a task's job is: waiting in the queue for a worker, or run by one (`host … pid …`, as shown). */
export type JobPlace = { kind: 'queued' } | { kind: 'running'; worker: string };

/**
 * Where the jobs of the session's tasks out are, by task id, for the jobs given (the
 * journal's: run/job-reattach.ts `jobsOut`). A job in the queue's active list runs on the
 * worker that took it (BullMQ's processedBy); one that exists, unfinished and not active,
 * waits (for a worker, or for another after its worker died). A job not in Redis (its add
 * under way, or an attempt its coordinator runs itself) or finished (its reply on its way)
 * is left out: the task shows as running, as it did before. Read from Redis, which anyone
 * who can write to it can change: it decides only what status shows, never a result, and
 * the names it gives are shown escaped.
 */
export async function jobPlaces(url: string, sessionId: string, jobs: ReadonlyMap<string, string>): Promise<Map<string, JobPlace>> {
  // Fails fast (a WaveError REDIS_UNREACHABLE) instead of waiting on reconnects.
  await checkRedisReachable(url);
  const name = queueNameOf(sessionId);
  const keys = new QueueKeys();
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    // The active list is as long as the jobs the workers run at once; the other jobs are read one field set each, in one round trip.
    const active = new Set(await client.lrange(keys.toKey(name, 'active'), 0, -1));
    const entries = [...jobs];
    const pipeline = client.pipeline();
    for (const [, job] of entries) pipeline.hmget(keys.toKey(name, job), 'timestamp', 'finishedOn', 'pb');
    const results = (await pipeline.exec()) ?? [];
    const places = new Map<string, JobPlace>();
    entries.forEach(([taskId, job], index) => {
      const [error, fields] = results[index] ?? [new Error('no answer'), null];
      if (error || !Array.isArray(fields)) return;
      const [timestamp, finishedOn, processedBy] = fields as (string | null)[];
      if (timestamp == null || finishedOn != null) return;
      places.set(taskId, active.has(job) ? { kind: 'running', worker: processedBy == null ? 'a worker' : showCell(workerShown(processedBy)) } : { kind: 'queued' });
    });
    return places;
  } finally {
    client.disconnect();
  }
}

/** How often a coordinator counts the workers listening to its queue. */
const kWatchMs = 2000;

/**
 * How long no worker may listen before the coordinator says how to start one. A worker
 * serving every session connects to a new session's queue within a second or two of its
 * first beat (bullmq-worker.ts looks each second): a run started beside such workers must
 * not tell its user to start workers they have.
 */
export const kUnservedMs = 3000;

/** What a coordinator's WorkerWatch tells. */
export interface WorkerWatchEars {
  /** The count of worker processes listening to the queue, at the first look and when it changes. */
  changed(count: number): void;
  /**
   * No worker has listened for kUnservedMs: since the run started (`again` false), or since
   * the last one left (`again` true). Told once, and again only after workers came and all left.
   */
  unserved(again: boolean): void;
}

/**
 * The coordinator's count of the worker processes listening to its queue (their Redis
 * connections carry their names; a process has several): told when it changes, and told
 * when none has listened for a while (kUnservedMs).
 */
export class WorkerWatch {
  readonly #queue: Queue;
  readonly #timer: NodeJS.Timeout;
  #count: number | undefined;
  #looking = false;
  /** Since when no worker listens (performance.now), while none does. */
  #noneSince: number | undefined;
  /** Whether a worker listened at some look: a later silence is all of them leaving. */
  #served = false;
  /** Whether the silence under way was told. */
  #told = false;

  constructor(url: string, sessionId: string, ears: WorkerWatchEars) {
    this.#queue = new Queue(queueNameOf(sessionId), { connection: { url, maxRetriesPerRequest: null } });
    this.#queue.on('error', () => undefined);
    const start = performance.now();
    const look = async () => {
      if (this.#looking) return;
      this.#looking = true;
      try {
        // BullMQ gives `name` as the queue's name and the connection's own as `rawname`.
        const names = (await this.#queue.getWorkers()).map((client) => client['rawname'] ?? '');
        const count = new Set(names.map((name) => name.slice(name.indexOf(':w:') + 3))).size;
        if (count !== this.#count) ears.changed(count);
        this.#count = count;
        this.#silence(count, start, ears);
      } catch {
        // Redis is away: the next look tries again.
      } finally {
        this.#looking = false;
      }
    };
    void look();
    this.#timer = setInterval(() => void look(), kWatchMs).unref();
  }

  /** Tells `unserved` once no worker has listened for kUnservedMs, and readies the next telling once one listens again. */
  #silence(count: number, start: number, ears: WorkerWatchEars): void {
    if (count > 0) {
      this.#served = true;
      this.#noneSince = undefined;
      this.#told = false;
      return;
    }
    const now = performance.now();
    // The first silence counts from the run's start: a worker may have been on its way since.
    this.#noneSince ??= this.#served ? now : start;
    if (this.#told || now - this.#noneSince < kUnservedMs) return;
    this.#told = true;
    ears.unserved(this.#served);
  }

  /** Stops counting; a Redis that is away is not waited for. */
  stop(): void {
    clearInterval(this.#timer);
    void this.#queue.disconnect().catch(() => undefined);
  }
}
