import { Queue, QueueEvents } from 'bullmq';
import { cleanText } from '../../executors/clean-text.js';
import { cutError } from '../../executors/finish-attempt.js';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { scrubSecrets } from '../../executors/secret-scrubber.js';
import { abortError, type ExecutionBackend } from '../execution-backend.js';
import { bullmqConnection, checkRedisReachable } from './connection.js';
import { kJobName, type AttemptJobData } from './job-data.js';
import { jobIdOf, queueNameOf } from './names.js';
import { readJobReply } from './reply-schema.js';

export interface BullmqBackendOptions {
  /** The Redis URL (`--redis`, CSV_WAVE_REDIS_URL). */
  url: string;
  /** Names the queue and the jobs (session-id.ts). */
  sessionId: string;
  /** Dropped replies and lost jobs are told here. */
  warn: (message: string) => void;
}

/**
 * Finished jobs are removed once their reply is read; these keep what a coordinator never
 * read (it died) for a day, long enough for a `resume` to merge it, and no longer.
 */
const kKeepUnreadSeconds = 24 * 3600;

/**
 * How often the jobs still awaited are looked up in Redis. The outcome events are the fast
 * path, but a stream read can miss some: those of the moment before its first read, those
 * trimmed from a long stream (BullMQ keeps about 10,000), those of a reconnect. A job's
 * state in Redis is the truth, and this look finds every outcome the events missed.
 */
const kLookupMs = 1000;

/** A submit waiting for its job's outcome. */
interface Waiting {
  resolve: (reply: AttemptReply) => void;
  reject: (error: Error) => void;
}

/**
 * Runs attempts as BullMQ jobs on Redis, taken by `csv-wave worker` processes on any
 * machine. One job per attempt, with one BullMQ attempt: retries, backoff and halts stay
 * in csv-wave's scheduler. The job's id is made of the session, the task and the attempt,
 * so a coordinator started again finds the jobs of its predecessor instead of adding them
 * twice, and its outcome is read from Redis if it finished meanwhile.
 *
 * Exactly once: a reply settles the submit waiting for that job id and nothing else; a
 * reply for an id no submit waits for (a late one after Ctrl-C, a second delivery) is
 * dropped with a warning. BullMQ itself completes a job only once (its lock token).
 */
export class BullmqBackend implements ExecutionBackend {
  readonly #options: BullmqBackendOptions;
  readonly #queue: Queue<AttemptJobData, string>;
  readonly #events: QueueEvents;
  /** Submits not answered yet, by job id. */
  readonly #waiting = new Map<string, Waiting>();
  /**
   * Jobs whose reply was taken, by the event or by a look-up: the other path brings the same
   * reply again, which is no second delivery. One short string per attempt of the run.
   */
  readonly #taken = new Set<string>();
  /** Awaited jobs whose add went through: one of these missing from Redis has vanished. */
  readonly #added = new Set<string>();
  readonly #lookup: NodeJS.Timeout;
  #lookingUp = false;
  /** Removals of cancelled jobs under way. */
  readonly #removals = new Set<Promise<void>>();
  #closed = false;

  private constructor(options: BullmqBackendOptions, queue: Queue<AttemptJobData, string>, events: QueueEvents) {
    this.#options = options;
    this.#queue = queue;
    this.#events = events;
    events.on('completed', ({ jobId, returnvalue }) => this.#settle(jobId, () => readJobReply(returnvalue)));
    events.on('failed', ({ jobId, failedReason }) => this.#settle(jobId, () => lostJobReply(failedReason)));
    // ioredis reconnects by itself; BullMQ emits the errors of the attempts in between.
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    this.#lookup = setInterval(() => void this.#lookUpAwaited(), kLookupMs).unref();
  }

  /** Connects to Redis (a WaveError REDIS_UNREACHABLE when it does not answer) and listens to the session's queue. */
  static async open(options: BullmqBackendOptions): Promise<BullmqBackend> {
    await checkRedisReachable(options.url);
    const name = queueNameOf(options.sessionId);
    const connection = bullmqConnection(options.url);
    const queue = new Queue<AttemptJobData, string>(name, { connection });
    const events = new QueueEvents(name, { connection });
    // Listening before the first add: an outcome is not missed between the add and the listener.
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    return new BullmqBackend(options, queue, events);
  }

  submit(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptReply> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#closed) return Promise.reject(new Error('The bullmq backend is closed: it runs no more attempts'));
    const id = jobIdOf(this.#options.sessionId, request.task.id, request.task.attempt);
    return new Promise<AttemptReply>((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.delete(id);
        this.#added.delete(id);
        reject(abortError(signal?.reason));
        void this.#removeWaiting([id]);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      this.#waiting.set(id, {
        resolve: (reply) => {
          done();
          resolve(reply);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.#add(id, request).catch((error: unknown) =>
        this.#settle(id, () => ({ kind: 'error', errorClass: 'transient', error: cleanText(`The job could not be added to Redis: ${String(error)}`) })),
      );
    });
  }

  /**
   * Adds the attempt's job, or finds the one a coordinator before this one added (same id:
   * BullMQ keeps the first). That one may have finished already, its outcome event gone by:
   * the next look-up (kLookupMs) reads it from Redis. Not looked up here: that would be a
   * second round trip for every job, for the few a resume finds.
   */
  async #add(id: string, request: AttemptRequest): Promise<void> {
    await this.#queue.add(kJobName, { request }, {
      jobId: id,
      attempts: 1,
      removeOnComplete: { age: kKeepUnreadSeconds },
      removeOnFail: { age: kKeepUnreadSeconds },
    });
    if (this.#waiting.has(id)) this.#added.add(id);
  }

  /**
   * Settles the submit of job `id` if the job has finished, or if it is gone: a Redis that
   * restarted without its data lost it, and no worker will ever answer. That attempt fails
   * as transient, so the scheduler's retry adds a fresh job (the next attempt's).
   */
  async #lookUp(id: string): Promise<void> {
    const job = await this.#queue.getJob(id);
    if (!job && this.#added.has(id)) {
      this.#settle(id, () => ({ kind: 'error', errorClass: 'transient', error: `The job ${id} vanished from Redis (did Redis restart without its data?)` }));
      return;
    }
    if (!job || !this.#waiting.has(id) || job.finishedOn === undefined) return;
    if (job.failedReason) this.#settle(id, () => lostJobReply(job.failedReason));
    else this.#settle(id, () => readJobReply(job.returnvalue));
  }

  /** Looks up every job still awaited (see kLookupMs); one look at a time, and none while Redis is away. */
  async #lookUpAwaited(): Promise<void> {
    if (this.#lookingUp || this.#waiting.size === 0) return;
    this.#lookingUp = true;
    try {
      await Promise.all([...this.#waiting.keys()].map((id) => this.#lookUp(id)));
    } catch {
      // Redis is away: the next look tries again.
    } finally {
      this.#lookingUp = false;
    }
  }

  /** Hands the job's reply to the submit waiting for it, once; then the finished job leaves Redis. */
  #settle(id: string, reply: () => AttemptReply): void {
    const waiting = this.#waiting.get(id);
    if (!waiting) {
      if (!this.#closed && !this.#taken.has(id)) this.#options.warn(`bullmq: dropped a reply for job ${id}: no attempt waits for it (late, or delivered twice)`);
      return;
    }
    this.#waiting.delete(id);
    this.#added.delete(id);
    this.#taken.add(id);
    waiting.resolve(reply());
    void this.#queue.remove(id).catch(() => undefined);
  }

  /**
   * Removes jobs no worker has taken yet; a job a worker runs stays (its reply will be
   * dropped). Tracked, so that close waits for them: a cancel is often not awaited.
   */
  #removeWaiting(ids: readonly string[]): Promise<void> {
    const removal = Promise.all(ids.map((id) => this.#queue.remove(id).catch(() => undefined))).then(() => undefined);
    this.#removals.add(removal);
    void removal.then(() => this.#removals.delete(removal));
    return removal;
  }

  /**
   * Every submit rejects with an AbortError, and the jobs of those attempts that no worker
   * took are removed from the queue. Jobs a worker runs go on there (not ended yet: see
   * docs/bullmq-progress.md); their replies are dropped.
   */
  async cancelAll(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    for (const id of ids) {
      const waiting = this.#waiting.get(id);
      this.#waiting.delete(id);
      this.#added.delete(id);
      waiting?.reject(abortError());
    }
    if (!this.#closed) await this.#removeWaiting(ids);
  }

  /**
   * The id of the job whose reply this run accepted for the attempt (the journal records
   * it); undefined for an attempt that ran no job here (an interactive handler's).
   */
  jobOf(taskId: string, attempt: number): string | undefined {
    const id = jobIdOf(this.#options.sessionId, taskId, attempt);
    return this.#taken.has(id) ? id : undefined;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#lookup);
    await Promise.all(this.#removals);
    await Promise.allSettled([this.#events.close(), this.#queue.close()]);
  }
}

/** A job BullMQ failed: its worker died under it more often than the stalled-job check allows, or it could not run it. */
function lostJobReply(reason: string | undefined): AttemptReply {
  return {
    kind: 'error',
    errorClass: 'worker-crash',
    error: cutError(scrubSecrets(cleanText(`The job was lost by its workers: ${reason ?? 'no reason given'}`))),
  };
}
