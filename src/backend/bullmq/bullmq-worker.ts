import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type Job } from 'bullmq';
import { cleanText } from '../../executors/clean-text.js';
import type { AttemptReply } from '../../executors/messages.js';
import { describe } from '../../executors/module.js';
import { scrubSecrets } from '../../executors/secret-scrubber.js';
import { killChildProcessGroups } from '../local/child-groups.js';
import { LocalBackend } from '../local/local-backend.js';
import { bullmqConnection, checkRedisReachable } from './connection.js';
import type { AttemptJobData } from './job-data.js';
import { queueNameOf } from './names.js';

export interface BullmqWorkerOptions {
  url: string;
  sessionId: string;
  /** Jobs run at once. @default 1 */
  concurrency: number;
  /**
   * Milliseconds between BullMQ's checks for jobs whose worker died, and how long a job's
   * lock lasts unrenewed: a job whose worker was killed goes back to the queue after one to
   * two of these. @default 30000 (BullMQ's)
   */
  stalledIntervalMs?: number;
  /** The folder command tasks run in. @default a fresh temporary folder per job */
  workdir?: string;
  /** A line per job, and what the worker does. */
  log: (line: string) => void;
}

/** Heap limit of the worker threads in MB, as the engine's default (RunOptions.workerMemoryMb). */
const kWorkerMemoryMb = 1024;

/**
 * `csv-wave worker`: takes the session's jobs from Redis and runs each with the local
 * backend, the same code path as a local run (piscina threads, command process groups,
 * timeouts, output caps), and returns the reply as the job's return value: JSON text, as
 * the local pool passes it between threads, so a reply too deep to rebuild as an object
 * still arrives (the coordinator checks it: reply-schema.ts).
 */
export class BullmqWorker {
  readonly #options: BullmqWorkerOptions;
  readonly #backend: LocalBackend;
  readonly #worker: Worker<AttemptJobData, string>;
  /** Folders of the jobs running now, whose commands a forced stop kills. */
  readonly #running = new Set<string>();

  private constructor(options: BullmqWorkerOptions) {
    this.#options = options;
    const threads = Math.min(options.concurrency, availableParallelism());
    this.#backend = new LocalBackend({
      sessionDir: options.workdir ?? tmpdir(),
      threads,
      tasksPerThread: Math.ceil(options.concurrency / threads),
      workerMemoryMb: kWorkerMemoryMb,
      endpointConcurrency: undefined,
    });
    this.#worker = new Worker<AttemptJobData, string>(queueNameOf(options.sessionId), (job) => this.#run(job), {
      connection: bullmqConnection(options.url),
      concurrency: options.concurrency,
      // One redelivery after a worker died under a job; a job that stalls again fails as a worker crash (csv-wave's rules).
      maxStalledCount: 1,
      ...(options.stalledIntervalMs === undefined
        ? {}
        : { stalledInterval: options.stalledIntervalMs, lockDuration: options.stalledIntervalMs }),
    });
    this.#worker.on('error', (error) => options.log(`worker: ${error.message}`));
  }

  /** Connects (a WaveError REDIS_UNREACHABLE when Redis does not answer) and starts taking jobs. */
  static async start(options: BullmqWorkerOptions): Promise<BullmqWorker> {
    await checkRedisReachable(options.url);
    const worker = new BullmqWorker(options);
    await worker.#worker.waitUntilReady();
    options.log(`worker ${process.pid}: taking jobs of ${queueNameOf(options.sessionId)}, ${options.concurrency} at once`);
    return worker;
  }

  async #run(job: Job<AttemptJobData, string>): Promise<string> {
    const started = performance.now();
    const request = job.data.request;
    const dir = this.#options.workdir ?? mkdtempSync(join(tmpdir(), 'csv-wave-job-'));
    this.#running.add(dir);
    let reply: AttemptReply;
    try {
      reply = await this.#backend.submit({ ...request, task: { ...request.task, session: dir } });
    } finally {
      this.#running.delete(dir);
      if (this.#options.workdir === undefined) rmSync(dir, { recursive: true, force: true });
    }
    const outcome = reply.kind === 'finished' ? reply.status : `${reply.errorClass}: ${reply.error.split('\n', 1)[0]}`;
    this.#options.log(`[JOB] ${job.id ?? '?'} ${outcome} (${Math.round(performance.now() - started)} ms)`);
    return replyText(reply);
  }

  /**
   * Stops taking jobs and lets the running ones finish (their replies are returned), then
   * frees the threads. `force`: the running jobs are left to BullMQ's stalled-job check,
   * which gives them to another worker, and their commands are killed.
   */
  async close(force = false): Promise<void> {
    if (force) await Promise.all([...this.#running].map((dir) => killChildProcessGroups(dir)));
    await this.#worker.close(force);
    await this.#backend.close();
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
