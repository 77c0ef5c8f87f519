import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { showCell } from '../../csv/columns.js';
import { kFlagDefaults } from '../../option-table.js';
import { abortError, type ExecutionBackend } from '../execution-backend.js';
import { RulesByRole, type AwaitedTask } from './jobs/awaited-task.js';
import { bullmqConnection, checkRedisReachable } from './redis/connection.js';
import { JobAdds } from './jobs/job-adds.js';
import type { AttemptJobData } from './jobs/job-data.js';
import { KeysInTurn, lookUpJobs, type JobState } from './jobs/job-lookup.js';
import { failedJobReply } from './jobs/job-refusal.js';
import { unaddedJobReply, vanishedJobReply } from './jobs/job-replies.js';
import { attemptOfJob, isJobOfRun, jobIdOf, queueNameOf } from './jobs/names.js';
import { RedisPresence } from './redis/redis-presence.js';
import { readSignedJobReply } from './trust/reply-schema.js';
import { maxReplyBytes, oversizedReply, bytesPast } from './trust/reply-size.js';
import { removeUnawaitedJobs, type SweepResult } from './jobs/session-jobs.js';
import { removeReadJobs } from './jobs/finished-jobs.js';
import { compactDigest, jobSigned, requestDigest, type Signing } from './trust/signing.js';
import { writeRefusal } from './redis/write-refusal.js';

export interface BullmqBackendOptions {
  /** The Redis URL (`--redis`, CSV_WAVE_REDIS_URL). */
  url: string;
  /** Names the queue and the jobs (session-id.ts). */
  sessionId: string;
  /** Signs the jobs and checks the replies' signatures (signing.ts; secret-source.ts makes it). */
  signing: Signing;
  /** This run's id (names.ts newRunId): in every job id it adds, so that no job id repeats across runs. */
  runId: string;
  /**
   * Jobs an interrupted run left for tasks of this run, by task id: the attempt 1 of such a
   * task awaits that job again instead of adding its own (a resume after kill -9 finds the
   * job running or finished). Only jobs a journal names as an attempt's. @default none
   */
  reattach?: ReadonlyMap<string, string>;
  /**
   * Called before each add of jobs goes out: the run's journal is flushed there, so that
   * every job in Redis is named by a journaled attempt (the only ones a resume awaits again).
   */
  beforeAdd?: () => void;
  /** Dropped replies and lost jobs are told here. */
  warn: (message: string) => void;
  /**
   * Told once per awaited attempt when a worker takes its job (its wait in the queue ended):
   * by BullMQ's `active` event, or by the look-up when the event was missed. Only what a run
   * shows depends on it (queued or running): whoever writes to Redis can tell it falsely.
   */
  running?: (taskId: string, attempt: number) => void;
  /**
   * Milliseconds Redis may stay away (no answer) before `lost` is told. @default the table's `--redis-timeout` (60 s)
   */
  redisTimeoutMs?: number;
  /**
   * Told once Redis has not answered, or refused every write (full, …), for
   * `redisTimeoutMs`, with a reason to stop the run on; the awaited submits stay unanswered
   * (the run takes their tasks back).
   */
  lost?: (reason: string) => void;
}

/** Redis may be away this long before the run stops. */
export const kDefaultRedisTimeoutMs = kFlagDefaults.redisTimeoutSeconds * 1000;

/**
 * How often awaited jobs are looked up in Redis. The outcome events are the fast path,
 * but a stream read can miss some: those of the moment before its first read, those
 * trimmed from a long stream (BullMQ keeps about 10,000), those of a reconnect. A job's
 * state in Redis is the truth, and this look finds every outcome the events missed.
 */
const kLookupMs = 1000;
/** Jobs looked up per look (in turn, oldest first): 100,000 queued jobs cost no 100,000 reads a second. */
const kLookupBatch = 2000;
/** The pause before BullMQ's event reader is started again after it stopped: a flood of bad events costs no busy loop. */
const kEventsRestartMs = 100;

/** A submit waiting for its job's outcome, and what its reply is held to. */
interface Waiting extends AwaitedReply {
  resolve: (reply: AttemptReply) => void;
  reject: (error: Error) => void;
}

/** What an awaited attempt's reply is checked against and held to. */
interface AwaitedReply extends AwaitedTask {
  /** The digest of the request submitted (compactDigest): a reply of another request is not merged. */
  digest: string;
}

/**
 * Runs attempts as BullMQ jobs on Redis, taken by `csv-wave worker` processes on any
 * machine. One job per attempt, with one BullMQ attempt: retries, backoff and halts stay
 * in csv-wave's scheduler. The job's id is made of the session, the run, the task and the
 * attempt: no id repeats across runs, and a coordinator started again awaits the jobs its
 * journal names (`reattach`) instead of adding them twice, their outcomes read from Redis
 * if they finished meanwhile.
 *
 * Few round trips: the jobs submitted in one turn of the event loop are added with one
 * `addBulk` (a pipeline), and the connection pipelines by itself what else one turn sends
 * (the removals of the jobs whose replies were read, the look-ups).
 *
 * Exactly once: a reply settles the submit waiting for that job id and nothing else; a
 * reply for an id no submit waits for (a late one after Ctrl-C, a second delivery) is
 * dropped with a warning. BullMQ itself completes a job only once (its lock token).
 */
export class BullmqBackend implements ExecutionBackend {
  readonly #options: BullmqBackendOptions;
  /** The queue's connection, auto-pipelined; also the one of the look-ups. */
  readonly #redis: Redis;
  readonly #queue: Queue<AttemptJobData, string>;
  readonly #events: QueueEvents;
  readonly #presence: RedisPresence;
  /** Submits not answered yet, by job id, in the order they were submitted. */
  readonly #waiting = new Map<string, Waiting>();
  /**
   * Jobs whose reply was taken, by the event or by a look-up: the other path brings the same
   * reply again, which is no second delivery. One short string per attempt of the run.
   */
  readonly #taken = new Set<string>();
  /** Awaited jobs whose add went through: one of these missing from Redis has vanished. */
  readonly #added = new Set<string>();
  /** Awaited jobs a worker took (told `running`): no more than the workers run at once. */
  readonly #begun = new Set<string>();
  /** Finished jobs whose replies were read, to remove from Redis (#removeRead). */
  #toRemove: string[] = [];
  readonly #adds: JobAdds;
  readonly #lookup: NodeJS.Timeout;
  #lookingUp = false;
  /** The awaited jobs in turn, kLookupBatch a look. */
  readonly #inTurn = new KeysInTurn(this.#waiting, kLookupBatch);
  /** Removals under way: of the jobs whose replies were read, and of cancelled ones. */
  readonly #removals = new Set<Promise<void>>();
  readonly #rules = new RulesByRole();
  #closed = false;

  private constructor(options: BullmqBackendOptions, redis: Redis, queue: Queue<AttemptJobData, string>, events: QueueEvents) {
    this.#options = options;
    this.#redis = redis;
    this.#queue = queue;
    this.#events = events;
    this.#adds = new JobAdds(queue, {
      // A closed backend adds nothing more, even a slice Redis refused that waits to go again.
      wanted: (id) => !this.#closed && this.#waiting.has(id),
      ...(options.beforeAdd ? { beforeAdd: options.beforeAdd } : {}),
      added: (ids) => {
        this.#presence.accepted();
        for (const id of ids) if (this.#waiting.has(id)) this.#added.add(id);
      },
      // Some of them may be in Redis all the same: their replies, if any, come for an attempt no longer awaited.
      failed: (ids, error) => {
        for (const id of ids) this.#settle(id, () => unaddedJobReply(error));
      },
      refused: (refusal) => this.#presence.refused(refusal),
      sign: (id, digest) => options.signing.sign(jobSigned(queue.name, id, digest)),
    });
    events.on('completed', ({ jobId, returnvalue }) => this.#settle(jobId, (task) => this.#readReply(jobId, returnvalue, task)));
    events.on('failed', ({ jobId, failedReason }) => this.#settle(jobId, () => failedJobReply(failedReason)));
    events.on('active', ({ jobId }) => this.#begin(jobId));
    // ioredis reconnects by itself; BullMQ emits the errors of the attempts in between.
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    redis.on('error', () => undefined);
    this.#lookup = setInterval(() => {
      this.#removeRead();
      void this.#lookUpAwaited();
    }, kLookupMs).unref();
    const timeoutMs = options.redisTimeoutMs ?? kDefaultRedisTimeoutMs;
    this.#presence = new RedisPresence(options.url, {
      timeoutMs,
      warn: options.warn,
      lost: (reason) => options.lost?.(reason),
    });
    void this.#readEvents();
  }

  /**
   * Runs BullMQ's event reader until the backend closes, and again whenever it stops: one
   * event whose return value is not JSON, which anyone who can write to Redis can add to
   * the stream, makes its loop throw (its JSON.parse is in the loop) and end for good. It
   * starts again at the stream's end; what it missed meanwhile the look-up finds.
   */
  async #readEvents(): Promise<void> {
    while (!this.#closed) {
      try {
        await this.#events.run();
      } catch {
        if (!this.#closed) await new Promise((resolve) => setTimeout(resolve, kEventsRestartMs).unref());
      }
    }
  }

  /** Connects to Redis (a WaveError REDIS_UNREACHABLE when it does not answer) and listens to the session's queue. */
  static async open(options: BullmqBackendOptions): Promise<BullmqBackend> {
    await checkRedisReachable(options.url);
    const name = queueNameOf(options.sessionId);
    const redis = new Redis(options.url, { maxRetriesPerRequest: null, enableAutoPipelining: true });
    const queue = new Queue<AttemptJobData, string>(name, { connection: redis });
    // Not autorun: the backend runs the reader itself, and runs it again when it stops (#readEvents).
    const events = new QueueEvents(name, { connection: bullmqConnection(options.url), autorun: false });
    // Listening before the first add: an outcome is not missed between the add and the listener.
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    return new BullmqBackend(options, redis, queue, events);
  }

  submit(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptReply> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#closed) return Promise.reject(new Error('The bullmq backend is closed: it runs no more attempts'));
    const id = this.jobFor(request.task.id, request.task.attempt);
    const digest = requestDigest(request);
    const reply = this.#await(id, { taskId: request.task.id, rules: this.#rules.of(request), digest: compactDigest(digest) }, signal);
    this.#adds.add(id, request, digest);
    return reply;
  }

  /**
   * The reply of job `id`, once it comes. Apart from submit, so that the closures waiting
   * here do not hold the request: 100,000 queued attempts keep no 100,000 requests alive.
   */
  #await(id: string, { taskId, rules, digest }: AwaitedReply, signal: AbortSignal | undefined): Promise<AttemptReply> {
    return new Promise<AttemptReply>((resolve, reject) => {
      // The run's submits carry no signal (run/task-runner.ts): the promise's own
      // resolvers are kept, no closures of ours, a few hundred bytes less per queued attempt.
      if (!signal) {
        this.#waiting.set(id, { resolve, reject, taskId, rules, digest });
        return;
      }
      const onAbort = () => {
        this.#waiting.delete(id);
        this.#added.delete(id);
        this.#begun.delete(id);
        reject(abortError(signal.reason));
        this.#removeWaiting(id);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const done = () => signal.removeEventListener('abort', onAbort);
      this.#waiting.set(id, {
        taskId,
        rules,
        resolve: (reply) => {
          done();
          resolve(reply);
        },
        reject: (error) => {
          done();
          reject(error);
        },
        digest,
      });
    });
  }

  /**
   * Looks up the next kLookupBatch awaited jobs (see kLookupMs), in one round trip; one
   * look at a time, and none while Redis is away. A job finished settles its submit; a job
   * gone although its add went through was lost with a Redis that restarted without its
   * data, and no worker will ever answer: that attempt fails as transient, so the
   * scheduler's retry adds a fresh job (the next attempt's).
   */
  async #lookUpAwaited(): Promise<void> {
    if (this.#lookingUp || this.#waiting.size === 0 || !this.#presence.answering) return;
    this.#lookingUp = true;
    try {
      const ids = this.#inTurn.next();
      const states = await lookUpJobs(this.#redis, (id) => this.#queue.toKey(id), ids, (id) => this.#maxBytesOf(id));
      for (const [id, state] of states) this.#found(id, state);
    } catch {
      // Redis is away: the next look tries again.
    } finally {
      this.#lookingUp = false;
    }
  }

  #found(id: string, state: JobState): void {
    if (!this.#waiting.has(id)) return;
    if (state.kind === 'taken') {
      this.#begin(id);
    } else if (state.kind === 'missing' && this.#added.has(id)) {
      this.#settle(id, () => vanishedJobReply(id));
    } else if (state.kind === 'failed') {
      this.#settle(id, () => failedJobReply(state.reason));
    } else if (state.kind === 'completed') {
      this.#settle(id, (task) => this.#readReply(id, state.returnvalue, task));
    } else if (state.kind === 'oversized') {
      this.#settle(id, (task) => oversizedReply(state.bytes, maxReplyBytes(task.rules.limits)));
    }
  }

  /**
   * A finished job's reply: no larger than its task's caps allow (measured before it is
   * parsed), signed with the secret, of the request submitted, and held to its role's rules;
   * or not merged.
   */
  #readReply(id: string, returnvalue: unknown, task: AwaitedReply): AttemptReply {
    const limit = maxReplyBytes(task.rules.limits);
    const bytes = bytesPast(returnvalue, limit);
    if (bytes !== undefined) return oversizedReply(bytes, limit);
    const expected = { signing: this.#options.signing, queue: this.#queue.name, jobId: id, digest: task.digest, warn: this.#options.warn };
    return readSignedJobReply(returnvalue, expected, task);
  }

  /** The largest return value of job `id` the look-up reads (reply-size.ts). */
  #maxBytesOf(id: string): number {
    const waiting = this.#waiting.get(id);
    return waiting === undefined ? 0 : maxReplyBytes(waiting.rules.limits);
  }

  /** A worker took job `id`: its attempt, if awaited, is told running, once. */
  #begin(id: string): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined || this.#begun.has(id)) return;
    this.#begun.add(id);
    this.#options.running?.(waiting.taskId, attemptOfJob(id));
  }

  /** Hands the job's reply to the submit waiting for it, once; then the finished job leaves Redis. */
  #settle(id: string, reply: (task: AwaitedReply) => AttemptReply): void {
    const waiting = this.#waiting.get(id);
    if (!waiting) {
      // The id as the event stream has it, which anyone who can write to Redis can write: shown escaped and cut.
      if (!this.#closed && !this.#taken.has(id)) this.#options.warn(`bullmq: dropped a reply for job ${showCell(id)}: no attempt waits for it (late, or delivered twice)`);
      return;
    }
    this.#waiting.delete(id);
    this.#added.delete(id);
    this.#begun.delete(id);
    this.#taken.add(id);
    waiting.resolve(reply(waiting));
    this.#toRemove.push(id);
  }

  /**
   * Removes the finished jobs whose replies were read, at the next look-up: by then the
   * journal holds their results (it is written within the turn the reply arrives in), so a
   * coordinator killed in between finds the job again on resume instead of running it
   * anew. One command for all of them (finished-jobs.ts); tracked, so that close waits for it.
   */
  #removeRead(): void {
    if (this.#toRemove.length === 0) return;
    const removal = removeReadJobs(this.#redis, this.#queue, this.#toRemove).catch(() => undefined);
    this.#toRemove = [];
    this.#removals.add(removal);
    void removal.then(() => this.#removals.delete(removal));
  }

  /**
   * Removes the job of an aborted submit if no worker has taken it yet; one a worker runs
   * stays (its reply will be dropped). Tracked, so that close waits for it.
   */
  #removeWaiting(id: string): void {
    const removal = this.#queue.remove(id).then(
      () => undefined,
      () => undefined,
    );
    this.#removals.add(removal);
    void removal.then(() => this.#removals.delete(removal));
  }

  /**
   * Every submit rejects with an AbortError, and the session's jobs that no worker took
   * are removed from the queue: all at once (BullMQ's drain, one script), as the run stops
   * and the queue is the session's own. Jobs a worker runs go on until the coordinator's
   * cancel message ends them (open-coordinator.ts); their replies are dropped.
   */
  async cancelAll(): Promise<void> {
    for (const [id, waiting] of [...this.#waiting]) {
      this.#waiting.delete(id);
      this.#added.delete(id);
      this.#begun.delete(id);
      waiting.reject(abortError());
    }
    if (this.#closed) return;
    const removal = this.#queue.drain().catch(() => undefined);
    this.#removals.add(removal);
    // A Redis that is away is not waited for: a Ctrl-C must end the run (the jobs stay, see close).
    await this.#whileAnswering(removal);
    this.#removals.delete(removal);
  }

  /**
   * A write of the coordinator's own besides the adds (the registry's beat) went through, or
   * failed with `error`: a refusal for Redis's state (write-refusal.ts) counts toward
   * `--redis-timeout` as a refused add does, so that a full Redis with no add pending (every
   * job out, workers that no longer see the session) does not hold the run for ever.
   */
  wrote(error?: unknown): void {
    if (error === undefined) {
      this.#presence.accepted();
      return;
    }
    const refusal = writeRefusal(error);
    if (refusal !== undefined) this.#presence.refused(refusal);
  }

  /** Whether Redis answers now: what the coordinator does at a stop waits for Redis only then. */
  get answering(): boolean {
    return this.#presence.answering;
  }

  /**
   * The id of the job whose reply this run accepted for the attempt (the journal records
   * it); undefined for an attempt that ran no job here (an interactive handler's).
   */
  jobOf(taskId: string, attempt: number): string | undefined {
    const id = this.jobFor(taskId, attempt);
    return this.#taken.has(id) ? id : undefined;
  }

  /**
   * The id of the job of an attempt, known before it is submitted (the journal's start
   * entry records it): the job an interrupted run left, for the attempt 1 of a task it
   * names (`reattach`), else this run's own.
   */
  jobFor(taskId: string, attempt: number): string {
    const left = attempt === 1 ? this.#options.reattach?.get(taskId) : undefined;
    return left ?? jobIdOf(this.#options.sessionId, this.#options.runId, taskId, attempt);
  }

  /**
   * Removes the session's jobs that no attempt of this run awaits or may await
   * (session-jobs.ts): at the start of the run, before its first add, and at its close.
   * Kept: this run's jobs whose replies were not read (a task taken back by a stop: a
   * resume awaits them again) and the jobs a resume may re-attach to.
   */
  removeUnawaited(): Promise<SweepResult> {
    const { sessionId, runId, reattach } = this.#options;
    const left = new Set(reattach?.values());
    return removeUnawaitedJobs(this.#queue, (id) => !this.#taken.has(id) && (isJobOfRun(id, sessionId, runId) || left.has(id)));
  }

  /**
   * Waits for the removals of cancelled jobs and closes the connections, unless Redis is
   * away: then nothing waits for it (a Ctrl-C ends the run at once; the removals are lost,
   * so those jobs run when Redis is back and their replies are never read) and the
   * connections are dropped.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#lookup);
    // One turn first: the journal writes the last results before their jobs are removed.
    await new Promise((resolve) => setImmediate(resolve));
    this.#removeRead();
    await this.#whileAnswering(Promise.all(this.#removals));
    // What an earlier run left that ended meanwhile, and the jobs a stop left unread: none is awaited now.
    await this.#whileAnswering(this.removeUnawaited().catch(() => undefined));
    // quit, not disconnect: the removals of the last replies read are still on their way.
    const closing = Promise.allSettled([this.#events.close(), this.#queue.close().then(() => this.#redis.quit())]);
    const closed = await this.#whileAnswering(closing);
    this.#presence.dispose();
    if (closed) return;
    // Dropped, not awaited: a connection that never reached Redis may never say it ended.
    this.#redis.disconnect();
    void this.#events.disconnect().catch(() => undefined);
  }

  /** True once `work` is done; false as soon as Redis does not answer (then `work` is left to itself). */
  #whileAnswering(work: Promise<unknown>): Promise<boolean> {
    if (!this.#presence.answering) return Promise.resolve(false);
    return new Promise((resolve) => {
      const look = setInterval(() => {
        if (this.#presence.answering) return;
        clearInterval(look);
        resolve(false);
      }, 250);
      void work.finally(() => {
        clearInterval(look);
        resolve(true);
      });
    });
  }
}
