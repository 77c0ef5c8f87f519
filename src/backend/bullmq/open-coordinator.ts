import { realpathSync } from 'node:fs';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { capHeapGrowth } from '../../process/heap-growth.js';
import type { BackendContext } from '../backend-context.js';
import type { BackendPlan } from '../backend-choice.js';
import type { AttemptJobs, ExecutionBackend } from '../execution-backend.js';
import { BullmqBackend } from './bullmq-backend.js';
import { publishCancel } from './jobs/cancel-channel.js';
import { checkRedisReachable } from './redis/connection.js';
import { isJobOfSession, newRunId, queueNameOf } from './jobs/names.js';
import { QueueRate } from './redis/rate-limit.js';
import { maskRedisUrl } from './redis/redis-url.js';
import { kSecretEnv } from './trust/secret-source.js';
import { redisLostReason } from './redis/redis-lost.js';
import { SessionRegistration } from './session/session-registry.js';
import { SessionLease } from './session/session-lease.js';
import { WorkerWatch } from './session/worker-presence.js';
import { refusedAtStart } from './redis/write-refusal.js';

/** A bullmq run's choice (chooseBackend): the Redis, the queue's rate, how long Redis may be away, the signing secret. */
export type BullmqPlan = Extract<BackendPlan, { type: 'bullmq' }>;

/**
 * Refuses a run before it writes anything, as opening its coordinator would: Redis
 * unreachable, or the session id held by another run (SessionLease.check).
 */
export async function checkCoordinatorFree(plan: BullmqPlan, sessionDir: string, sessionId: string): Promise<void> {
  await checkRedisReachable(plan.url);
  await SessionLease.check(plan.url, sessionId, realpathSync(sessionDir));
}

/**
 * The backend of a coordinator (`run --backend bullmq`): the session's id (the run's, made
 * on its first such run and anew in a copy of the folder: `run.sessionId`), this run's hold on it (a second
 * coordinator on one id is refused: SESSION_LOCKED), the session's jobs that no attempt
 * awaits removed, the queue's rate limit, the connection to Redis, the session's place
 * among the running ones (for workers that serve every session), the count of its workers,
 * and a line telling how to start workers while none serves it. The secret was settled
 * with the choice: a run without one never gets here.
 */
export async function openCoordinator(plan: BullmqPlan, run: BackendContext): Promise<ExecutionBackend> {
  const { url, signing } = plan;
  const { sessionDir } = run;
  const tell = (line: string) => run.warn(line);
  // Redis away too long stops the run like a failed write: no new task, the running ones back to pending.
  const lost = (reason: string) => run.lost(redisLostReason(reason, run.path));
  // Another coordinator took the session id over (this one stopped beating): its jobs are no longer this run's.
  const superseded = (reason: string) =>
    run.lost(
      `Stopped: ${reason}. No new task was started; the tasks whose jobs were out went back to pending. Stop the other run, then run \`csv-wave resume ${run.path}\`.`,
    );
  // Read by V8 at each full collection, so it holds from here on; the coordinator's process only.
  capHeapGrowth();
  if (signing.insecure) tell('bullmq: --insecure-no-secret: jobs and replies are not signed; whoever can write to the Redis can run commands on the workers');
  const sessionId = run.sessionId();
  const runId = newRunId();
  const timeout = plan.redisTimeoutSeconds === undefined ? {} : { redisTimeoutMs: plan.redisTimeoutSeconds * 1000 };
  // A journal copied from another folder names jobs of that folder's id: not this session's.
  const reattach = new Map([...run.left.jobs].filter(([, job]) => isJobOfSession(job, sessionId)));
  // Held before anything of the queue is touched: the sweep below removes what no attempt of this run awaits.
  await checkRedisReachable(url);
  const lease = await SessionLease.take(url, sessionId, runId, realpathSync(sessionDir), superseded).catch((error: unknown) => {
    throw refusedAtStart(error, url);
  });
  const queueRate = new QueueRate(url, sessionId, plan.rate);
  let backend: BullmqBackend;
  try {
    backend = await BullmqBackend.open({
      url,
      sessionId,
      signing,
      runId,
      reattach,
      beforeAdd: () => run.flush(),
      warn: tell,
      lost,
      running: (taskId, attempt) => run.attemptRunning(taskId, attempt),
      ...timeout,
    });
  } catch (error) {
    queueRate.stop();
    await lease.release(true);
    throw refusedAtStart(error, url);
  }
  let registration: SessionRegistration;
  try {
    // Held: no other coordinator adds to the queue, so what no attempt of this run awaits is nobody's.
    const swept = await backend.removeUnawaited();
    if (swept.removed > 0) tell(`bullmq: removed ${swept.removed} job(s) of earlier runs that no attempt awaits`);
    if (swept.running > 0) tell(`bullmq: ${swept.running} job(s) of earlier runs still run on workers; no attempt awaits their replies`);
    // Applied before the first job (no job starts outside the rate), then with every beat; the hold is renewed with it.
    // A Redis full at the start refuses this first beat: the run stops before any job (exit 2).
    registration = await SessionRegistration.start(
      url,
      sessionId,
      signing,
      async () => {
        await Promise.all([queueRate.apply(), lease.renew()]);
      },
      (error) => backend.wrote(error),
    );
  } catch (error) {
    queueRate.stop();
    await backend.close();
    await lease.release(true);
    throw refusedAtStart(error, url);
  }
  tell(`bullmq: tasks go to queue ${queueNameOf(sessionId)} on ${maskRedisUrl(url)} (session id ${sessionId})`);
  // How to start workers is said only while none serves the session: not to a user whose workers are there.
  const start =
    `start workers with: csv-wave worker --redis URL --session-id ${sessionId} (or without --session-id: every session), ` +
    (signing.insecure ? 'with --insecure-no-secret' : `with the same secret (${kSecretEnv} or --secret-file)`);
  const watch = new WorkerWatch(url, sessionId, {
    changed: (count) => run.workersConnected(count),
    unserved: (again) => tell(`bullmq: ${again ? 'every worker of this session left' : 'no worker serves this session yet'}; ${start}`),
  });
  return new Coordinator(backend, { registration, lease, watch, queueRate }, url, sessionId, tell);
}

/** What a coordinator keeps up in Redis while it runs, and stops at close. */
interface Presence {
  registration: SessionRegistration;
  lease: SessionLease;
  watch: WorkerWatch | undefined;
  queueRate: QueueRate;
}

/**
 * The bullmq backend, plus what the coordinator tells the workers: cancelAll (a run
 * stopped by a signal, after the grace) ends the jobs they run, with their commands.
 */
class Coordinator implements ExecutionBackend {
  readonly #backend: BullmqBackend;
  readonly #presence: Presence;
  readonly #url: string;
  readonly #sessionId: string;
  readonly #tell: (line: string) => void;
  /** Cancels under way: close waits for them, a cancel is often not awaited. */
  readonly #cancels = new Set<Promise<void>>();

  constructor(
    backend: BullmqBackend,
    presence: Presence,
    url: string,
    sessionId: string,
    tell: (line: string) => void,
  ) {
    this.#backend = backend;
    this.#presence = presence;
    this.#url = url;
    this.#sessionId = sessionId;
    this.#tell = tell;
  }

  submit(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptReply> {
    return this.#backend.submit(request, signal);
  }

  /** Each attempt is a job: its start entry names it before it is added, its finish entry the job that answered. */
  readonly jobs: AttemptJobs = {
    started: (taskId, attempt) => this.#backend.jobFor(taskId, attempt),
    finished: (taskId, attempt) => this.#backend.jobOf(taskId, attempt),
  };

  /** The backend removes the jobs no worker took; then the workers end the ones they run. */
  cancelAll(): Promise<void> {
    const cancel = this.#backend.cancelAll().then(async () => {
      if (!this.#backend.answering || !(await publishCancel(this.#url, this.#sessionId))) {
        this.#tell('bullmq: the workers could not be told to end their jobs (Redis cannot be reached); they run to their end');
      }
    });
    this.#cancels.add(cancel);
    void cancel.finally(() => this.#cancels.delete(cancel));
    return cancel;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#cancels);
    // Asked before the backend closes: its close ends the watch that knows whether Redis answers.
    const answering = this.#backend.answering;
    await this.#backend.close();
    this.#presence.watch?.stop();
    this.#presence.queueRate.stop();
    // Leaving the set of running sessions waits for Redis only while it answers (a worker forgets a silent session anyway).
    await this.#presence.registration.stop(answering);
    await this.#presence.lease.release(answering);
  }
}
