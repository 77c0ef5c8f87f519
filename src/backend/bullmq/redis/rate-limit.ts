import { Queue } from 'bullmq';
import { bullmqConnection } from './connection.js';
import { queueNameOf } from '../jobs/names.js';
import type { RateLimit } from '../../../option-table.js';

/**
 * The queue's limit when the run sets none: so high it never holds a job back, but present,
 * because BullMQ honours a manual pause (a 429's Retry-After, see pauseQueue) only on a
 * queue that has a limit.
 */
const kUnlimited: RateLimit = { max: 2 ** 31, durationMs: 1000 };

/**
 * The session queue's rate limit: BullMQ's global rate limit, kept in the queue's meta in
 * Redis, so every worker of the queue obeys it, whenever it started. `rate`, or none (see
 * kUnlimited) when undefined. The coordinator applies it before its first job, and again
 * with each beat of its registration: a Redis restarted without its data has it back.
 */
export class QueueRate {
  readonly #queue: Queue;
  readonly #rate: RateLimit;

  constructor(url: string, sessionId: string, rate: RateLimit | undefined) {
    this.#queue = new Queue(queueNameOf(sessionId), { connection: bullmqConnection(url) });
    this.#queue.on('error', () => undefined);
    this.#rate = rate ?? kUnlimited;
  }

  async apply(): Promise<void> {
    await this.#queue.setGlobalRateLimit(this.#rate.max, this.#rate.durationMs);
  }

  /** Drops the connection; a Redis that is away is not waited for. */
  stop(): void {
    void this.#queue.disconnect().catch(() => undefined);
  }
}
