import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import type { ExecutionBackend } from '../execution-backend.js';
import { BullmqBackend } from './bullmq-backend.js';
import { publishCancel } from './cancel-channel.js';
import { queueNameOf } from './names.js';
import { QueueRate } from './rate-limit.js';
import type { RateLimit } from './rate.js';
import { maskRedisUrl } from './redis-url.js';
import { SessionRegistration } from './session-registry.js';
import { sessionIdOf } from './session-id.js';
import { WorkerWatch } from './worker-presence.js';

/**
 * The backend of a coordinator (`run --backend bullmq`): the session's id (made on its
 * first such run, and anew in a copy of the folder), the queue's rate limit, the connection to Redis, the session's place
 * among the running ones (for workers that serve every session), and a line telling how
 * to start workers.
 */
export async function openCoordinator(
  sessionDir: string,
  url: string,
  tell: (line: string) => void,
  redis: { redisTimeoutSeconds: number | undefined; lost: (reason: string) => void },
  rate?: RateLimit,
  onWorkers?: (count: number) => void,
): Promise<ExecutionBackend & { jobOf(taskId: string, attempt: number): string | undefined }> {
  const sessionId = sessionIdOf(sessionDir, tell);
  const timeout = redis.redisTimeoutSeconds === undefined ? {} : { redisTimeoutMs: redis.redisTimeoutSeconds * 1000 };
  const backend = await BullmqBackend.open({ url, sessionId, warn: tell, lost: redis.lost, ...timeout });
  // Applied before the first job (no job starts outside the rate), then with every beat.
  const queueRate = new QueueRate(url, sessionId, rate);
  const registration = await SessionRegistration.start(url, sessionId, () => queueRate.apply());
  tell(
    `bullmq: tasks go to queue ${queueNameOf(sessionId)} on ${maskRedisUrl(url)}; ` +
      `start workers with: csv-wave worker --redis URL --session-id ${sessionId} (or without --session-id: every session)`,
  );
  const watch = onWorkers === undefined ? undefined : new WorkerWatch(url, sessionId, onWorkers);
  return new Coordinator(backend, { registration, watch, queueRate }, url, sessionId, tell);
}

/** What a coordinator keeps up in Redis while it runs, and stops at close. */
interface Presence {
  registration: SessionRegistration;
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
  }
}
