import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { describe } from './module.js';
import type { WorkerReply, WorkerRequest } from './messages.js';

export interface WorkerPoolOptions {
  /** Worker threads. */
  threads: number;
  /** Tasks one thread runs at once: above 1 for tasks that mostly wait (commands, model calls). */
  tasksPerThread: number;
  /** Heap limit of a worker thread in MB; a task that allocates past it kills only its worker. */
  workerMemoryMb: number;
}

/** Extra time a module task gets past its timeout before its thread is ended (it may be spinning). */
const kBackstopGraceMs = 2000;

/**
 * The piscina pool that runs csv-wave tasks. A worker that dies (process.exit, out of
 * memory, ended at a timeout) fails its tasks with a worker-crash or timeout reply; piscina
 * starts a fresh thread and the run goes on.
 */
export class WorkerPool {
  readonly #pool: Piscina<WorkerRequest, WorkerReply>;

  constructor(options: WorkerPoolOptions) {
    this.#pool = new Piscina({
      filename: workerFile(),
      minThreads: 1,
      maxThreads: options.threads,
      concurrentTasksPerWorker: options.tasksPerThread,
      resourceLimits: { maxOldGenerationSizeMb: options.workerMemoryMb },
      idleTimeout: 30_000,
    });
  }

  async run(request: WorkerRequest): Promise<WorkerReply> {
    // A command times itself out (it must kill its process group); a module cannot be
    // stopped from inside its thread if it spins, so the pool ends the thread a little later.
    const backstop =
      request.executor.type === 'module' && request.timeoutMs > 0 ? new AbortController() : undefined;
    const timer = backstop ? setTimeout(() => backstop.abort(), request.timeoutMs + kBackstopGraceMs) : undefined;
    try {
      return await this.#pool.run(request, backstop ? { signal: backstop.signal } : {});
    } catch (error) {
      if (backstop?.signal.aborted) {
        return {
          kind: 'error',
          errorClass: 'timeout',
          error: `Timed out after ${request.timeoutMs / 1000}s; its worker thread was ended`,
        };
      }
      return { kind: 'error', errorClass: 'worker-crash', error: `Worker thread died: ${describe(error)}` };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}

/** The compiled worker entry. Under a TypeScript test runner this file is .ts; the worker is in dist/. */
function workerFile(): string {
  const here = import.meta.url;
  const url = here.endsWith('.ts')
    ? new URL('../../dist/executors/worker.js', here)
    : new URL('./worker.js', here);
  return fileURLToPath(url);
}
