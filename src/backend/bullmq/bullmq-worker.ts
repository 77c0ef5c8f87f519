import { setMaxListeners } from 'node:events';
import { availableParallelism, hostname } from 'node:os';
import { UnrecoverableError, type Job } from 'bullmq';
import { cleanText } from '../../text/clean-text.js';
import type { AttemptReply } from '../../executors/messages.js';
import { describe } from '../../executors/module.js';
import { scrubSecrets, type SecretScrubber } from '../../text/secret-scrubber.js';
import { killTaskCommands } from '../local/child-groups.js';
import { LocalBackend } from '../local/local-backend.js';
import { CancelListener } from './jobs/cancel-channel.js';
import { checkRedisReachable } from './redis/connection.js';
import { admitJob, kAgentTypes, sealReply, type WorkerRules } from './trust/job-admission.js';
import type { AttemptJobData } from './jobs/job-data.js';
import { JobFolders } from './jobs/job-folders.js';
import { refusalReason } from './jobs/job-refusal.js';
import { queueNameOf } from './jobs/names.js';
import { maskRedisUrl } from './redis/redis-url.js';
import { kDefaultMaxSessions, kForgetMs, SessionDirectory, type RunningSessions } from './session/session-registry.js';
import { kCancelledMessage, SessionWorker } from './session/session-worker.js';

export interface BullmqWorkerOptions {
  url: string;
  /** The one session to serve; undefined serves every running session (session-registry.ts). */
  sessionId?: string;
  /** Jobs run at once, per session served. @default 1 */
  concurrency: number;
  /** Which jobs it runs: signed ones, of the executors and model servers it allows (job-admission.ts). */
  rules: WorkerRules;
  /** Without `sessionId`: the sessions served at once at most, the most recently beaten (`--max-sessions`). @default 16 */
  maxSessions?: number;
  /**
   * Milliseconds between BullMQ's checks for jobs whose worker died, and how long a job's
   * lock lasts unrenewed: a job whose worker was killed goes back to the queue after one to
   * two of these. @default 30000 (BullMQ's)
   */
  stalledIntervalMs?: number;
  /** The folder command tasks run in. @default a folder of each job's own (job-folders.ts) */
  workdir?: string;
  /** A line per job, and what the worker does. */
  log: (line: string) => void;
}

/** Heap limit of the worker threads in MB, as the engine's default (RunOptions.workerMemoryMb). */
const kWorkerMemoryMb = 1024;

/** How often a worker serving every session looks for new ones (and ones gone). */
const kDiscoverMs = 1000;

/** A job this worker runs now. */
interface RunningJob {
  sessionId: string;
  dir: string;
  taskId: string;
  attempt: number;
  /**
   * Aborted when the job is cancelled (Ctrl-C on its coordinator) or the worker stops at
   * once: the one of its session's jobs running then (an AbortController per job costs a
   * no-op job a tenth of its CPU, and a cancel ends all of them anyway).
   */
  controller: AbortController;
  /** Set by stopNow: the job is left to BullMQ, neither completed nor failed. */
  released?: boolean;
}

/**
 * `csv-wave worker`: takes the jobs of one session, or of every running session, from
 * Redis and runs each with the local backend, the same code path as a local run (piscina
 * threads, command process groups, timeouts, output caps), and returns the reply as the
 * job's return value: JSON text, as the local pool passes it between threads, so a reply
 * too deep to rebuild as an object still arrives (the coordinator checks it: reply-schema.ts).
 */
export class BullmqWorker {
  readonly #options: BullmqWorkerOptions;
  readonly #backend: LocalBackend;
  /** The jobs' working folders; none with `--workdir`. */
  readonly #folders: JobFolders | undefined;
  /** The BullMQ worker of each session served, by session id. */
  readonly #sessions = new Map<string, SessionWorker>();
  /** Those of sessions let go, until their close ends (their running jobs finish first). */
  readonly #leaving = new Set<SessionWorker>();
  /** Without `sessionId`: the last beat seen of each session served, in ms of Redis's clock. */
  readonly #lastBeats = new Map<string, number>();
  /** Sessions served that were said to be missing from the registry (said once until they come back). */
  readonly #missingTold = new Set<string>();
  /** The jobs running now, by job id. */
  readonly #running = new Map<string, RunningJob>();
  /** The abort controller of each session's jobs, replaced once aborted. */
  readonly #aborts = new Map<string, AbortController>();
  /** Takes the signing secret out of every reply (Signing.scrubber). */
  readonly #secretScrubber: SecretScrubber;
  /** Subscribed once the worker exists: a cancel may come at any moment after. */
  #cancels: CancelListener | undefined;
  readonly #directory: SessionDirectory | undefined;
  readonly #discover: NodeJS.Timeout | undefined;
  /** What `status` shows for the jobs this worker runs: BullMQ keeps it in each job (processedBy). */
  readonly name = `${hostname()}:${process.pid}`;
  #stopping = false;
  /** A look at the registry is under way (#serveRunning). */
  #discovering = false;
  /** What the worker last said of the registrations it does not serve: said again only when it changes. */
  #ignoredTold = { unsigned: 0, beyondLimit: 0 };

  private constructor(options: BullmqWorkerOptions) {
    this.#options = options;
    this.#secretScrubber = options.rules.signing.scrubber();
    const threads = Math.min(options.concurrency, availableParallelism());
    this.#folders = options.workdir === undefined ? JobFolders.open() : undefined;
    this.#backend = new LocalBackend({
      sessionDir: this.#folders?.parent ?? options.workdir ?? '',
      threads,
      tasksPerThread: Math.ceil(options.concurrency / threads),
      workerMemoryMb: kWorkerMemoryMb,
      endpointConcurrency: undefined,
      // A worker killed with kill -9 leaves no command running: its job runs again on another worker.
      endCommandsIfOrphaned: true,
    });
    if (options.sessionId === undefined) {
      this.#directory = new SessionDirectory(options.url, options.rules.signing, options.maxSessions ?? kDefaultMaxSessions);
      this.#discover = setInterval(() => void this.#serveRunning(), kDiscoverMs);
    }
  }

  /** Connects (a WaveError REDIS_UNREACHABLE when Redis does not answer) and starts taking jobs. */
  static async start(options: BullmqWorkerOptions): Promise<BullmqWorker> {
    await checkRedisReachable(options.url);
    const worker = new BullmqWorker(options);
    // A thread started (and its entry loaded) while the worker connects: the first jobs of
    // every run otherwise waited for it, a fixed cost that weighed most with many workers.
    worker.#backend.warm();
    // Listening before the first job is taken: no cancel of a job it runs is missed.
    worker.#cancels = await CancelListener.start(options.url, (sessionId) => worker.#cancelSession(sessionId));
    if (options.sessionId === undefined) await worker.#serveRunning();
    else await worker.#serve(options.sessionId);
    const what = options.sessionId === undefined ? `every running session (queues ${queueNameOf('*')})` : queueNameOf(options.sessionId);
    options.log(`worker ${worker.name}: taking jobs of ${what}, ${options.concurrency} at once${options.sessionId === undefined ? ' per session' : ''}`);
    const { signing, executors, baseUrls, claudeBaseUrls, sandboxes, agentArgs } = options.rules;
    const agents = kAgentTypes.filter((type) => executors.has(type));
    options.log(
      `worker ${worker.name}: runs ${[...executors].join(', ')} jobs ${signing.insecure ? 'unsigned too (--insecure-no-secret: whoever can write to the Redis can run commands here)' : 'signed with its secret'}` +
        (executors.has('openai') || executors.has('codex') ? `; sends its OPENAI_API_KEY only to ${[...baseUrls].join(', ')}` : '') +
        (executors.has('claude') ? `; sends its ANTHROPIC_API_KEY only to ${[...claudeBaseUrls].join(', ')}` : '') +
        (agents.length === 0 ? '' : `; ${agents.join(', ')} jobs in the sandboxes ${[...sandboxes].join(', ')}, ${agentArgs ? 'with' : 'without'} CLI arguments or tools of their own`),
    );
    return worker;
  }

  async #serve(sessionId: string): Promise<void> {
    const session = new SessionWorker(sessionId, {
      url: this.#options.url,
      name: this.name,
      concurrency: this.#options.concurrency,
      ...(this.#options.stalledIntervalMs === undefined ? {} : { stalledIntervalMs: this.#options.stalledIntervalMs }),
      run: (job) => this.#run(sessionId, job),
      log: this.#options.log,
    });
    this.#sessions.set(sessionId, session);
    await session.ready();
  }

  /**
   * Serves the sessions whose coordinators beat (signed, the most recently beaten first, at
   * most --max-sessions), and lets go of the others first (their running jobs finish). One
   * look at a time: a look that serves many sessions outlasts kDiscoverMs on a busy machine,
   * and one acting on an older read would serve again what a newer one let go.
   */
  async #serveRunning(): Promise<void> {
    if (this.#stopping || !this.#directory || this.#discovering) return;
    this.#discovering = true;
    try {
      await this.#serveThese(this.#directory);
    } finally {
      this.#discovering = false;
    }
  }

  async #serveThese(directory: SessionDirectory): Promise<void> {
    let running: RunningSessions;
    let left: Set<string>;
    try {
      running = await directory.running();
      const missing = [...this.#sessions.keys()].filter((id) => !running.beats.has(id) && !running.beyondLimit.includes(id));
      left = missing.length === 0 ? new Set() : await directory.left(missing);
    } catch {
      return; // Redis is away: the next look tries again.
    }
    if (this.#stopping) return;
    for (const [sessionId, beat] of running.beats) this.#lastBeats.set(sessionId, beat);
    for (const [sessionId, session] of this.#sessions) {
      const why = this.#whyLeave(sessionId, running, left);
      if (why === undefined) continue;
      this.#sessions.delete(sessionId);
      this.#lastBeats.delete(sessionId);
      this.#missingTold.delete(sessionId);
      this.#options.log(`worker ${this.name}: ${queueNameOf(sessionId)} ${why}`);
      this.#leave(session);
    }
    for (const sessionId of running.served) {
      this.#missingTold.delete(sessionId);
      if (this.#sessions.has(sessionId) || this.#stopping) continue;
      this.#options.log(`worker ${this.name}: taking jobs of ${queueNameOf(sessionId)}`);
      await this.#serve(sessionId).catch(() => undefined);
    }
    this.#tellIgnored(running);
  }

  /**
   * Why a session served is to be let go now, or undefined to serve it on: it is beyond
   * --max-sessions, or its coordinator left (its mark), or it has been missing from the
   * registry since kForgetMs after its last beat seen. A session missing without a mark is
   * served on until then: a Redis restarted without its data lost the whole registry, and a
   * coordinator that still runs puts it back at its next beat. Letting it go there closed
   * its BullMQ worker while that worker's connections waited to reconnect, a close that
   * never ends (ioredis emits no `end` for a connection dropped while it waits to
   * reconnect): the worker process never exited after that.
   */
  #whyLeave(sessionId: string, running: RunningSessions, left: ReadonlySet<string>): string | undefined {
    if (running.beats.has(sessionId)) return undefined;
    if (running.beyondLimit.includes(sessionId)) return `is left: ${running.limit} more recently beaten sessions run (--max-sessions ${running.limit})`;
    if (left.has(sessionId)) return 'has no coordinator any more';
    const sinceBeat = running.now - (this.#lastBeats.get(sessionId) ?? 0);
    if (sinceBeat >= kForgetMs) return 'has no coordinator any more';
    if (!this.#missingTold.has(sessionId)) {
      this.#missingTold.add(sessionId);
      this.#options.log(
        `worker ${this.name}: ${queueNameOf(sessionId)} is missing from the session registry (did Redis lose its data?); served on until its coordinator beats again, or for ${Math.ceil((kForgetMs - sinceBeat) / 1000)} s`,
      );
    }
    return undefined;
  }

  /** Lets a session go: its BullMQ worker takes no more jobs and closes once its running ones end; close and stopNow wait for that, or drop it. */
  #leave(session: SessionWorker): void {
    this.#leaving.add(session);
    void session
      .close()
      .catch(() => undefined)
      .finally(() => this.#leaving.delete(session));
  }

  /** Says (once per change) how many registrations are not served: unsigned or forged ones, those beyond --max-sessions. */
  #tellIgnored(running: RunningSessions): void {
    const unsigned = running.unsigned;
    const beyondLimit = running.beyondLimit.length;
    if (unsigned !== this.#ignoredTold.unsigned && unsigned > 0) {
      this.#options.log(
        `worker ${this.name}: ignores ${unsigned} registration(s) in the session registry that are not session ids signed with this worker's secret (another secret, or someone writing to Redis)`,
      );
    }
    if (beyondLimit !== this.#ignoredTold.beyondLimit && beyondLimit > 0) {
      this.#options.log(`worker ${this.name}: serves the ${running.limit} most recently beaten of ${running.limit + beyondLimit} running sessions (--max-sessions ${running.limit})`);
    }
    this.#ignoredTold = { unsigned, beyondLimit };
  }

  async #run(sessionId: string, job: Job<AttemptJobData, string>): Promise<string> {
    const started = performance.now();
    const id = job.id ?? '';
    const queue = queueNameOf(sessionId);
    const admission = admitJob(queue, id, job.data, this.#options.rules);
    if (admission.kind === 'refuse') {
      this.#options.log(`[JOB] ${id} refused: ${admission.why}`);
      // Failed at once, whatever attempts the job's options ask for: the coordinator shows the reason.
      throw new UnrecoverableError(refusalReason(this.name, admission.why));
    }
    const { request, digest } = admission;
    // A command, or an agent's tools, may leave a process or files behind in its folder: it is never handed out again.
    const reusable = request.executor.type === 'module' || request.executor.type === 'openai';
    const dir = this.#folders?.take(reusable) ?? this.#options.workdir ?? '';
    const running: RunningJob = { sessionId, dir, taskId: request.task.id, attempt: request.task.attempt, controller: this.#abortOf(sessionId) };
    this.#running.set(id, running);
    let reply: AttemptReply;
    try {
      reply = await this.#backend.submit({ ...request, task: { ...request.task, session: dir } }, running.controller.signal);
    } catch (error) {
      if (!running.controller.signal.aborted) throw error;
      // Neither completed nor failed: BullMQ's stalled-job check gives it to another worker.
      if (running.released) return new Promise<string>(() => undefined);
      this.#options.log(`[JOB] ${id} cancelled (${Math.round(performance.now() - started)} ms)`);
      throw new Error(kCancelledMessage);
    } finally {
      this.#running.delete(id);
      this.#folders?.giveBack(dir, reusable);
    }
    // Not the worker's secret either, whatever the task read (its environment's secrets the executors scrub).
    reply = this.#secretScrubber.deep(reply);
    if (reply.kind === 'error' && reply.errorClass === 'rate-limited' && reply.retryAfterMs !== undefined && reply.retryAfterMs > 0) {
      // Every worker of the session waits, not only this one: the limit is the endpoint's, for all.
      await this.#sessions.get(sessionId)?.pause(reply.retryAfterMs);
      this.#options.log(`worker ${this.name}: ${queue} paused for ${reply.retryAfterMs} ms (the model server's Retry-After)`);
    }
    const outcome = reply.kind === 'finished' ? reply.status : `${reply.errorClass}: ${reply.error.split('\n', 1)[0]}`;
    this.#options.log(`[JOB] ${id} ${outcome} (${Math.round(performance.now() - started)} ms)`);
    return sealReply(this.#options.rules.signing, queue, id, digest, replyText(reply));
  }

  /** The controller that aborts the session's running jobs; a fresh one once it was used. */
  #abortOf(sessionId: string): AbortController {
    let controller = this.#aborts.get(sessionId);
    if (controller === undefined || controller.signal.aborted) {
      controller = new AbortController();
      // Each running job of the session listens to it (LocalBackend.submit).
      setMaxListeners(this.#options.concurrency + 10, controller.signal);
      this.#aborts.set(sessionId, controller);
    }
    return controller;
  }

  /** Ends the session's running jobs and their commands (its coordinator was stopped). */
  #cancelSession(sessionId: string): void {
    for (const job of this.#running.values()) if (job.sessionId === sessionId) this.#end(job);
  }

  /** Aborts a job (its reply is dropped) and kills its command's processes, wherever they went. */
  #end(job: RunningJob): void {
    job.controller.abort();
    killTaskCommands(job.dir, job.taskId, job.attempt);
  }

  /** The Redis URL as messages show it (password masked). */
  get redisShown(): string {
    return maskRedisUrl(this.#options.url);
  }

  /** True when Redis answers now: a worker that cannot reach it can neither finish nor hand back a job. */
  async redisAnswers(): Promise<boolean> {
    try {
      await checkRedisReachable(this.#options.url);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Stops taking jobs and lets the running ones finish (their replies are returned), then
   * frees the threads.
   */
  async close(): Promise<void> {
    this.#stopTaking();
    // The sessions let go too: their running jobs finish before the worker exits, as the others'.
    await Promise.all([...this.#sessions.values(), ...this.#leaving].map((session) => session.close()));
    this.#cancels?.stop();
    await this.#backend.close();
    this.#folders?.remove();
  }

  /**
   * Stops at once: kills the commands of the running jobs and leaves the jobs to BullMQ's
   * stalled-job check, which gives them to another worker. Does not wait for Redis: BullMQ's
   * close waits for its connections, forever when Redis is gone, so the connections are
   * dropped instead.
   */
  async stopNow(): Promise<void> {
    this.#stopTaking();
    for (const job of this.#running.values()) {
      job.released = true;
      this.#end(job);
    }
    for (const session of [...this.#sessions.values(), ...this.#leaving]) session.drop();
    this.#cancels?.stop();
    await this.#backend.close();
    this.#folders?.remove();
  }

  #stopTaking(): void {
    this.#stopping = true;
    clearInterval(this.#discover);
    this.#directory?.stop();
  }
}

/** The reply as JSON text; one that cannot be written fails its task as invalid output (as worker.ts `replyText`). */
function replyText(reply: AttemptReply): string {
  try {
    return JSON.stringify(reply);
  } catch (error) {
    const why = scrubSecrets(cleanText(describe(error)));
    return JSON.stringify({ kind: 'error', errorClass: 'invalid-output', error: `Invalid output: the reply cannot be sent (${why})` });
  }
}
