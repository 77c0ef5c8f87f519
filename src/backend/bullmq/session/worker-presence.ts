import { Queue } from 'bullmq';
import { checkRedisReachable } from '../redis/connection.js';
import type { AttemptJobData } from '../jobs/job-data.js';
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

/** The worker running each of the session's active jobs, by task id (`host … pid …`). */
export async function runningWorkers(url: string, sessionId: string): Promise<Map<string, string>> {
  // Fails fast (a WaveError REDIS_UNREACHABLE) instead of waiting on reconnects.
  await checkRedisReachable(url);
  const queue = new Queue<AttemptJobData, string>(queueNameOf(sessionId), { connection: { url } });
  queue.on('error', () => undefined);
  try {
    const places = new Map<string, string>();
    for (const job of await queue.getActive()) {
      const taskId = job?.data?.request?.task?.id;
      if (taskId !== undefined && job.processedBy !== undefined) places.set(taskId, workerShown(job.processedBy));
    }
    return places;
  } finally {
    await queue.close();
  }
}

/** How often a coordinator counts the workers listening to its queue. */
const kWatchMs = 2000;

/**
 * The coordinator's count of the worker processes listening to its queue (their Redis
 * connections carry their names; a process has several): told when it changes.
 */
export class WorkerWatch {
  readonly #queue: Queue;
  readonly #timer: NodeJS.Timeout;
  #count: number | undefined;
  #looking = false;

  constructor(url: string, sessionId: string, onChange: (count: number) => void) {
    this.#queue = new Queue(queueNameOf(sessionId), { connection: { url, maxRetriesPerRequest: null } });
    this.#queue.on('error', () => undefined);
    const look = async () => {
      if (this.#looking) return;
      this.#looking = true;
      try {
        // BullMQ gives `name` as the queue's name and the connection's own as `rawname`.
        const names = (await this.#queue.getWorkers()).map((client) => client['rawname'] ?? '');
        const count = new Set(names.map((name) => name.slice(name.indexOf(':w:') + 3))).size;
        if (count !== this.#count) onChange(count);
        this.#count = count;
      } catch {
        // Redis is away: the next look tries again.
      } finally {
        this.#looking = false;
      }
    };
    void look();
    this.#timer = setInterval(() => void look(), kWatchMs).unref();
  }

  /** Stops counting; a Redis that is away is not waited for. */
  stop(): void {
    clearInterval(this.#timer);
    void this.#queue.disconnect().catch(() => undefined);
  }
}
