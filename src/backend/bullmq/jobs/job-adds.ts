import type { Queue } from 'bullmq';
import type { AttemptRequest } from '../../../executors/messages.js';
import { kJobName, kReplyEnvelope, type AttemptJobData } from './job-data.js';
import { writeRefusal, type WriteRefusal } from '../redis/write-refusal.js';

/**
 * Finished jobs are removed once their reply is read. What a coordinator never read (it
 * died) expires a day after it finished (finished-jobs.ts, set by the worker); BullMQ's own
 * age limit is kept too, though it acts only when another job of the queue completes.
 */
const kKeepUnreadSeconds = 24 * 3600;
/** Jobs per addBulk: a scheduler tick that starts 100,000 attempts sends them in slices. */
const kAddBatch = 1000;
/** The pause before a slice Redis refused for its state (full, …) is sent again. */
const kRefusedRetryMs = 1000;

export interface JobAddsHandlers {
  /** Whether the job is still wanted (its submit was not aborted or cancelled meanwhile). */
  wanted: (id: string) => boolean;
  /** These jobs are in Redis (added now, or kept from an earlier coordinator: same id). */
  added: (ids: readonly string[]) => void;
  /** These could not be added (the add's own error); some may be in Redis all the same. */
  failed: (ids: readonly string[], error: unknown) => void;
  /**
   * Redis refused the slice for its state (write-refusal.ts: full, …): it is sent again
   * every kRefusedRetryMs, as long as its jobs are wanted, until Redis takes it.
   */
  refused: (refusal: WriteRefusal) => void;
  /** The coordinator's signature of a job (signing.ts `jobSigned`); undefined without a secret. */
  sign: (id: string, digest: string) => string | undefined;
  /** Called before each slice goes out: what names its jobs is made durable first (the journal). @default nothing */
  beforeAdd?: () => void;
}

/** A job waiting for its slice. */
interface ToAdd {
  id: string;
  request: AttemptRequest;
  digest: string;
}

/**
 * Adds submitted jobs in slices, one `addBulk` (a pipeline: one write, one round trip) per
 * slice of at most kAddBatch, one slice at a time: what is submitted while a slice is on its
 * way goes in the next one (a group commit). So a turn that submits 100,000 attempts does
 * not hold 100,000 serialized jobs in the connection at once, and a busy coordinator sends
 * big slices instead of one round trip per job. BullMQ keeps a job whose id exists as it is,
 * so a resumed coordinator that adds the jobs its journal names (reattach) does not double
 * them. Before each slice goes out, `beforeAdd` makes the journal durable. A slice Redis
 * refuses for its state (full at maxmemory, …) waits and goes again, its attempts unfailed:
 * the owner counts the refusals against `--redis-timeout`.
 */
export class JobAdds {
  readonly #queue: Queue<AttemptJobData, string>;
  readonly #handlers: JobAddsHandlers;
  #toAdd: ToAdd[] = [];
  #sending = false;

  constructor(queue: Queue<AttemptJobData, string>, handlers: JobAddsHandlers) {
    this.#queue = queue;
    this.#handlers = handlers;
  }

  /** Adds the job with the next slice: at the end of this turn, or once the slice on its way is added. */
  add(id: string, request: AttemptRequest, digest: string): void {
    if (this.#toAdd.length === 0 && !this.#sending) setImmediate(() => void this.#send());
    this.#toAdd.push({ id, request, digest });
  }

  async #send(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#toAdd.length > 0) {
        // Jobs whose submit was aborted or cancelled meanwhile are not added.
        const jobs = this.#toAdd.splice(0, kAddBatch).filter(({ id }) => this.#handlers.wanted(id));
        if (jobs.length === 0 || (await this.#addSlice(jobs))) continue;
        // Refused: first in line again, after a pause. Some may be in Redis already: an add keeps a job whose id exists.
        this.#toAdd.unshift(...jobs);
        await new Promise((resolve) => setTimeout(resolve, kRefusedRetryMs).unref());
      }
    } finally {
      this.#sending = false;
    }
  }

  /** Adds a slice; false when Redis refused it for its state (to be sent again), true once it is settled. */
  async #addSlice(jobs: ToAdd[]): Promise<boolean> {
    const opts = { attempts: 1, removeOnComplete: { age: kKeepUnreadSeconds }, removeOnFail: { age: kKeepUnreadSeconds } };
    const ids = jobs.map(({ id }) => id);
    try {
      this.#handlers.beforeAdd?.();
      await this.#queue.addBulk(jobs.map((job) => ({ name: kJobName, data: this.#data(job), opts: { ...opts, jobId: job.id } })));
    } catch (error) {
      // A full Redis is not the attempts' failure: failed, they would spend their retries in seconds and fail unrun.
      const refusal = writeRefusal(error);
      if (refusal !== undefined) {
        this.#handlers.refused(refusal);
        return false;
      }
      this.#handlers.failed(ids, error);
      return true;
    }
    this.#handlers.added(ids);
    return true;
  }

  #data({ id, request, digest }: ToAdd): AttemptJobData {
    const sig = this.#handlers.sign(id, digest);
    return sig === undefined ? { request, digest, envelope: kReplyEnvelope } : { request, digest, sig, envelope: kReplyEnvelope };
  }
}
