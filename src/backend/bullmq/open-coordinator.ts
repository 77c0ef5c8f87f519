import { realpathSync } from 'node:fs';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import type { ExecutionBackend } from '../execution-backend.js';
import { BullmqBackend } from './bullmq-backend.js';
import { publishCancel } from './cancel-channel.js';
import { checkRedisReachable } from './connection.js';
import { isJobOfSession, newRunId, queueNameOf } from './names.js';
import { QueueRate } from './rate-limit.js';
import type { RateLimit } from './rate.js';
import { maskRedisUrl } from './redis-url.js';
import { kSecretEnv, signingFrom, type SecretOptions } from './secret-source.js';
import { SessionRegistration } from './session-registry.js';
import { sessionIdOf } from './session-id.js';
import { SessionLease } from './session-lease.js';
import { WorkerWatch } from './worker-presence.js';
import { refusedAtStart } from './write-refusal.js';

/** What a coordinator needs of the run it serves, beyond Redis. */
export interface CoordinatorRun {
  /**
   * The jobs an interrupted run left for tasks of this one, by task id (their attempt 1),
   * as the journal names them: awaited again, and spared by the clean-up at the start.
   */
  reattach: ReadonlyMap<string, string>;
  /** Called before each add of jobs: the run's journal is made durable first. */
  beforeAdd: () => void;
  /** Told when another run took over the session id (see SessionLease.take): the run must stop. */
  superseded: (reason: string) => void;
}

/**
 * The backend of a coordinator (`run --backend bullmq`): the signing secret (refused
 * without one, unless `--insecure-no-secret`), the session's id (made on its first such
 * run, and anew in a copy of the folder), this run's hold on it (a second coordinator on
 * one id is refused: SESSION_LOCKED), the session's jobs that no attempt awaits removed,
 * the queue's rate limit, the connection to Redis, the session's place among the running
 * ones (for workers that serve every session), and a line telling how to start workers.
 */
export async function openCoordinator(
  sessionDir: string,
  url: string,
  tell: (line: string) => void,
  redis: { redisTimeoutSeconds: number | undefined; lost: (reason: string) => void; secret?: SecretOptions | undefined },
  rate?: RateLimit,
  onWorkers?: (count: number) => void,
  run: CoordinatorRun = { reattach: new Map(), beforeAdd: () => undefined, superseded: redis.lost },
): Promise<ExecutionBackend & Pick<BullmqBackend, 'jobOf' | 'jobFor'>> {
  // First: a run without a secret stops before it makes anything (exit 2).
  const signing = signingFrom(redis.secret ?? {}, 'A run with --backend bullmq');
  if (signing.insecure) tell('bullmq: --insecure-no-secret: jobs and replies are not signed; whoever can write to the Redis can run commands on the workers');
  const sessionId = sessionIdOf(sessionDir, tell);
  const runId = newRunId();
  const timeout = redis.redisTimeoutSeconds === undefined ? {} : { redisTimeoutMs: redis.redisTimeoutSeconds * 1000 };
  // A journal copied from another folder names jobs of that folder's id: not this session's.
  const reattach = new Map([...run.reattach].filter(([, job]) => isJobOfSession(job, sessionId)));
  // Held before anything of the queue is touched: the sweep below removes what no attempt of this run awaits.
  await checkRedisReachable(url);
  const lease = await SessionLease.take(url, sessionId, runId, realpathSync(sessionDir), run.superseded).catch((error: unknown) => {
    throw refusedAtStart(error, url);
  });
  const queueRate = new QueueRate(url, sessionId, rate);
  let backend: BullmqBackend;
  try {
    backend = await BullmqBackend.open({ url, sessionId, signing, runId, reattach, beforeAdd: run.beforeAdd, warn: tell, lost: redis.lost, ...timeout });
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
  tell(
    `bullmq: tasks go to queue ${queueNameOf(sessionId)} on ${maskRedisUrl(url)}; ` +
      `start workers with: csv-wave worker --redis URL --session-id ${sessionId} (or without --session-id: every session), ${
        signing.insecure ? 'with --insecure-no-secret' : `with the same secret (${kSecretEnv} or --secret-file)`
      }`,
  );
  const watch = onWorkers === undefined ? undefined : new WorkerWatch(url, sessionId, onWorkers);
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

  /** The job whose reply finished the attempt, for the journal's finish entry. */
  jobOf(taskId: string, attempt: number): string | undefined {
    return this.#backend.jobOf(taskId, attempt);
  }

  /** The job of an attempt, for the journal's start entry (written before the job is added). */
  jobFor(taskId: string, attempt: number): string {
    return this.#backend.jobFor(taskId, attempt);
  }

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
