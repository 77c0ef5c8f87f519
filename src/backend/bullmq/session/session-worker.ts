import { Queue, Worker, type Job } from 'bullmq';
import { bullmqConnection } from '../redis/connection.js';
import { FinishedJobs } from '../jobs/finished-jobs.js';
import type { AttemptJobData } from '../jobs/job-data.js';
import { queueNameOf } from '../jobs/names.js';

/** Why a cancelled job's processor throws: such a job fails in Redis, and is then removed. */
export const kCancelledMessage = 'csv-wave: the job was cancelled by its coordinator';

export interface SessionWorkerOptions {
  url: string;
  /** Kept by BullMQ in each job this worker takes (processedBy): `status` shows it. */
  name: string;
  concurrency: number;
  stalledIntervalMs?: number;
  run: (job: Job<AttemptJobData, string>) => Promise<string>;
  log: (line: string) => void;
}

/**
 * The BullMQ worker of one session's queue inside `csv-wave worker`, and the queue handle
 * that pauses the whole queue (a 429's Retry-After).
 */
export class SessionWorker {
  readonly #worker: Worker<AttemptJobData, string>;
  readonly #queue: Queue<AttemptJobData, string>;
  readonly #finished: FinishedJobs;

  constructor(sessionId: string, options: SessionWorkerOptions) {
    const name = queueNameOf(sessionId);
    const connection = bullmqConnection(options.url);
    this.#worker = new Worker<AttemptJobData, string>(name, (job) => options.run(job), {
      connection,
      name: options.name,
      concurrency: options.concurrency,
      // One redelivery after a worker died under a job; a job that stalls again fails as a worker crash (csv-wave's rules).
      maxStalledCount: 1,
      ...(options.stalledIntervalMs === undefined
        ? {}
        : { stalledInterval: options.stalledIntervalMs, lockDuration: options.stalledIntervalMs }),
    });
    this.#queue = new Queue<AttemptJobData, string>(name, { connection });
    this.#finished = new FinishedJobs(this.#queue);
    this.#worker.on('error', (error) => options.log(`worker: ${error.message}`));
    this.#queue.on('error', () => undefined);
    // A cancelled job leaves Redis: a `resume` then adds the attempt's job afresh instead of
    // finding this failed one and taking its failure for the attempt's outcome.
    this.#worker.on('failed', (job, error) => {
      if (job && error.message === kCancelledMessage) void job.remove().catch(() => undefined);
      else if (job?.id) this.#finished.add(job.id);
    });
    // A reply nobody reads (its coordinator was killed) leaves Redis a day after its job finished.
    this.#worker.on('completed', (job) => {
      if (job.id) this.#finished.add(job.id);
    });
  }

  async ready(): Promise<void> {
    await Promise.all([this.#worker.waitUntilReady(), this.#queue.waitUntilReady()]);
  }

  /**
   * No worker of the queue, on any machine, starts a job for `ms` (BullMQ's manual rate
   * limit; it needs a limit on the queue, which the coordinator always sets: rate-limit.ts).
   */
  async pause(ms: number): Promise<void> {
    await this.#queue.rateLimit(ms);
  }

  /** Takes no more jobs, lets the running ones finish, and closes the connections. */
  async close(): Promise<void> {
    await this.#worker.close();
    await this.#finished.flush().catch(() => undefined);
    await this.#queue.close();
  }

  /**
   * Drops the connections without waiting for Redis (BullMQ's close waits for it, forever
   * when it is gone): the running jobs are left to BullMQ's stalled-job check.
   */
  drop(): void {
    this.#finished.drop();
    void this.#worker.close(true).catch(() => undefined);
    void this.#worker.disconnect().catch(() => undefined);
    void this.#queue.disconnect().catch(() => undefined);
  }
}
