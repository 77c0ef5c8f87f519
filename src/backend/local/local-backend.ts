import pLimit, { type LimitFunction } from 'p-limit';
import { killChildProcessGroups, killLeftoverCommands } from './child-groups.js';
import { isAgentKind } from '../../executors/agents/settings.js';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { abortError, AttemptNotRun, type ExecutionBackend } from '../execution-backend.js';
import { Launchers } from './launchers.js';
import { readReply } from './pool-replies.js';
import type { WorkerPool, WorkerPoolOptions } from './worker-pool.js';

export interface LocalBackendOptions extends WorkerPoolOptions {
  /** The session whose commands cancelAll ends. */
  sessionDir: string;
  /** Model requests in flight at once (one limit per run is one per endpoint); undefined when the executor calls none. */
  endpointConcurrency: number | undefined;
  /** As LaunchersOptions: set by `csv-wave worker`. @default false */
  endCommandsIfOrphaned?: boolean;
}

/**
 * Runs attempts on this machine: commands from a small launcher process (launchers.ts),
 * in process groups of their own that cancelling kills; modules and model calls on the
 * piscina worker pool, model calls within the endpoint's limit; agent attempts (codex,
 * claude) on this thread, where they only start their CLI and read its output.
 *
 * Aborting one submit ends that task's command with its process group (Linux, where a
 * process's environment names its task). An attempt still queued, or running inside a
 * thread (a module, a model call), is not ended: a thread that runs several tasks cannot
 * be ended for one of them. It runs to its end, and its reply is dropped.
 */
export class LocalBackend implements ExecutionBackend {
  readonly #sessionDir: string;
  readonly #options: WorkerPoolOptions;
  /**
   * Started on the first attempt that needs it, and only then loaded (piscina with it): a
   * run of commands or agents never needs the pool.
   */
  #pool: Promise<WorkerPool> | undefined;
  readonly #launchers: Launchers;
  readonly #endpoint: LimitFunction | undefined;
  /** Submits not answered yet, and how to reject each. */
  readonly #out = new Set<(error: Error) => void>();
  #closed = false;
  /** The budget is spent: a model attempt that waits for an endpoint slot does not begin. */
  #held = false;

  constructor(options: LocalBackendOptions) {
    this.#sessionDir = options.sessionDir;
    this.#options = options;
    this.#launchers = new Launchers({ endCommandsIfOrphaned: options.endCommandsIfOrphaned === true });
    this.#endpoint = options.endpointConcurrency === undefined ? undefined : pLimit(options.endpointConcurrency);
  }

  submit(request: AttemptRequest, signal?: AbortSignal, replied?: (reply: AttemptReply) => void): Promise<AttemptReply> {
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    // The pool would answer a worker crash, and the scheduler retry it: a closed backend is a bug of its caller.
    if (this.#closed) return Promise.reject(new Error('The local backend is closed: it runs no more attempts'));
    const work = this.#run(request, replied);
    return new Promise<AttemptReply>((resolve, reject) => {
      const onAbort = () => {
        cancel(abortError(signal?.reason));
        if (request.executor.type === 'command') {
          void killChildProcessGroups(this.#sessionDir, 10, request.task.id, this.#launchers.parents());
        }
      };
      const settle = () => {
        this.#out.delete(cancel);
        signal?.removeEventListener('abort', onAbort);
      };
      const cancel = (error: Error) => {
        settle();
        reject(error);
      };
      this.#out.add(cancel);
      signal?.addEventListener('abort', onAbort, { once: true });
      work.then(
        (reply) => {
          settle();
          resolve(reply);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  }

  /**
   * Starts the worker pool now rather than on the first module or model attempt: a
   * `csv-wave worker` does it before it takes jobs, so that the first jobs of a run do not
   * wait for a thread to start.
   */
  warm(): void {
    void this.#workerPool();
  }

  holdBack(): void {
    this.#held = true;
  }

  async cancelAll(): Promise<void> {
    for (const cancel of [...this.#out]) cancel(abortError());
    await killChildProcessGroups(this.#sessionDir, 10, undefined, this.#launchers.parents());
  }

  /** What the commands cancelled started outside their process groups (setsid), and any spawned while the pool was closing. */
  sweep(): void {
    killLeftoverCommands(this.#sessionDir);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.#pool?.then((pool) => pool.close()), this.#launchers.close()]);
  }

  #workerPool(): Promise<WorkerPool> {
    this.#pool ??= import('./worker-pool.js').then(({ WorkerPool }) => new WorkerPool(this.#options));
    return this.#pool;
  }

  #run(request: AttemptRequest, replied: ((reply: AttemptReply) => void) | undefined): Promise<AttemptReply> {
    if (request.executor.type === 'command') return this.#launchers.run(request);
    if (isAgentKind(request.executor.type)) return runOnThisThread(request);
    const run = () => this.#workerPool().then((pool) => pool.run(request));
    if (!this.#endpoint) return run();
    // Held back, a waiting attempt frees its slot at once: the next one is held back too. A
    // reply is told before its slot is freed: its tokens reach the budget (which may hold
    // the rest back) before the next waiting request begins, however late the main thread
    // gets to the reply.
    return this.#endpoint(async () => {
      if (this.#held) throw new AttemptNotRun();
      const reply = await run();
      replied?.(reply);
      return reply;
    });
  }
}

/**
 * Runs an agent attempt on this thread, through the worker entry's own code (worker.ts
 * `replyText`: the executor, then the result checks) and its JSON text, read back as a
 * pool's reply is. An agent attempt spends its time waiting on its CLI (spawned in a
 * process group of its own, which cancelAll kills as a command's), so a worker thread
 * would only add its start (about 0.1 s of CPU, with its own copy of the modules) and a
 * message each way. Imported on the first agent attempt: other runs do not load it.
 */
async function runOnThisThread(request: AttemptRequest): Promise<AttemptReply> {
  const { replyText } = await import('../../executors/worker.js');
  return readReply(await replyText(request));
}
