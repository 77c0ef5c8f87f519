import type { Queue } from 'bullmq';
import type { AttemptRequest } from '../../executors/messages.js';
import { kJobName, type AttemptJobData } from './job-data.js';

/**
 * Finished jobs are removed once their reply is read; these keep what a coordinator never
 * read (it died) for a day, long enough for a `resume` to merge it, and no longer.
 */
const kKeepUnreadSeconds = 24 * 3600;
/** Jobs per addBulk: a scheduler tick that starts 100,000 attempts sends them in slices. */
const kAddBatch = 1000;

export interface JobAddsHandlers {
  /** Whether the job is still wanted (its submit was not aborted or cancelled meanwhile). */
  wanted: (id: string) => boolean;
  /** These jobs are in Redis (added now, or kept from an earlier coordinator: same id). */
  added: (ids: readonly string[]) => void;
  /** These could not be added (Redis refused or went away); some may be in Redis all the same. */
  failed: (ids: readonly string[], error: unknown) => void;
}

/**
 * Adds the jobs submitted in one turn of the event loop together: one `addBulk` (a
 * pipeline, one write and one round trip) per slice of kAddBatch, instead of one round
 * trip per job. BullMQ keeps a job whose id exists as it is, so a coordinator started again
 * adds its predecessor's jobs without doubling them.
 */
export class JobAdds {
  readonly #queue: Queue<AttemptJobData, string>;
  readonly #handlers: JobAddsHandlers;
  #toAdd: { id: string; request: AttemptRequest }[] = [];

  constructor(queue: Queue<AttemptJobData, string>, handlers: JobAddsHandlers) {
    this.#queue = queue;
    this.#handlers = handlers;
  }

  /** Adds the job at the end of this turn. */
  add(id: string, request: AttemptRequest): void {
    if (this.#toAdd.length === 0) setImmediate(() => this.#addAll());
    this.#toAdd.push({ id, request });
  }

  #addAll(): void {
    const jobs = this.#toAdd.filter(({ id }) => this.#handlers.wanted(id));
    this.#toAdd = [];
    for (let start = 0; start < jobs.length; start += kAddBatch) void this.#addSlice(jobs.slice(start, start + kAddBatch));
  }

  async #addSlice(jobs: { id: string; request: AttemptRequest }[]): Promise<void> {
    const opts = { attempts: 1, removeOnComplete: { age: kKeepUnreadSeconds }, removeOnFail: { age: kKeepUnreadSeconds } };
    const ids = jobs.map(({ id }) => id);
    try {
      await this.#queue.addBulk(jobs.map(({ id, request }) => ({ name: kJobName, data: { request }, opts: { ...opts, jobId: id } })));
    } catch (error) {
      this.#handlers.failed(ids, error);
      return;
    }
    this.#handlers.added(ids);
  }
}
