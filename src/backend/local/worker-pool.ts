import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import type { BatchReplies, PoolBatch } from '../../executors/pool-batch.js';
import type { PoolRequest } from '../../executors/worker.js';
import { ModuleBatches } from './module-batches.js';
import { backstopReply, crashReply, readReply } from './pool-replies.js';

export interface WorkerPoolOptions {
  /** Worker threads. */
  threads: number;
  /** Tasks one thread runs at once: above 1 for tasks that mostly wait (commands, model calls). */
  tasksPerThread: number;
  /** Heap limit of a worker thread in MB; a task that allocates past it kills only its worker. */
  workerMemoryMb: number;
}

/** The worker's export the pools call: it replies with JSON text. */
const kWorkerEntry = 'replyText';

/** Extra time a module task gets past its timeout before its thread is ended (it may be spinning). */
const kBackstopGraceMs = 2000;

/**
 * The piscina pool that runs csv-wave tasks. A worker that dies (process.exit, out of
 * memory, ended at a timeout) fails its tasks with a worker-crash or timeout reply; piscina
 * starts a fresh thread and the run goes on. Requests marked `isolated` (the retry after
 * such a death) go to a second pool whose threads run one task each, so that the task
 * that kills its thread dies alone and the tasks that only shared its thread get through.
 */
export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  /** Replies come back as JSON text (see worker.ts `replyText`), one or a batch's worth. */
  readonly #pool: Piscina<PoolRequest | PoolBatch, string | BatchReplies>;
  /** Module attempts go to #pool in batches. */
  readonly #batches: ModuleBatches;
  /** Started on the first isolated request: most runs never need it. */
  #isolated: Piscina<PoolRequest, string> | undefined;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#pool = new Piscina({
      ...workerEntry(),
      name: kWorkerEntry,
      minThreads: 1,
      maxThreads: options.threads,
      concurrentTasksPerWorker: options.tasksPerThread,
      resourceLimits: { maxOldGenerationSizeMb: options.workerMemoryMb },
      idleTimeout: 30_000,
    });
    this.#batches = new ModuleBatches(this.#pool as Piscina<PoolBatch, BatchReplies>, { ...options, graceMs: kBackstopGraceMs });
  }

  async run(request: AttemptRequest): Promise<AttemptReply> {
    // Module attempts are mostly short and all in this thread's reach: many go in one
    // message. An isolated retry runs alone, as before; commands spawn, which costs far
    // more than a message.
    if (request.executor.type === 'module' && !request.isolated) return this.#batches.run(request);
    // A command times itself out (it must kill its process group); a module cannot be
    // stopped from inside its thread if it spins, so the pool ends the thread a little later.
    // That deadline counts from when the worker takes the task up, not from when it was
    // queued: a task waiting behind a spinning one is not late, it is stuck, and it comes
    // back as a worker crash when the spinner's thread is ended.
    const backstop =
      request.executor.type === 'module' && request.timeoutMs > 0 ? new AbortController() : undefined;
    const started = backstop ? new MessageChannel() : undefined;
    let timer: NodeJS.Timeout | undefined;
    started?.port1.once('message', () => {
      timer = setTimeout(() => backstop!.abort(), request.timeoutMs + kBackstopGraceMs);
    });
    const pool = request.isolated ? this.#isolatedPool() : (this.#pool as Piscina<PoolRequest, string>);
    try {
      const text = started
        ? await pool.run({ ...request, started: started.port2 }, { signal: backstop!.signal, transferList: [started.port2] })
        : await pool.run(request);
      return readReply(text);
    } catch (error) {
      return backstop?.signal.aborted ? backstopReply(request, this.#options.tasksPerThread) : crashReply(error);
    } finally {
      clearTimeout(timer);
      started?.port1.close();
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#pool.destroy(), this.#isolated?.destroy()]);
    this.#batches.close();
  }

  #isolatedPool(): Piscina<PoolRequest, string> {
    this.#isolated ??= new Piscina({
      ...workerEntry(),
      name: kWorkerEntry,
      // Not 0: piscina (5.3) replaces a dead thread only up to minThreads, so with 0 the
      // tasks queued behind a task that killed the last thread would wait forever.
      minThreads: 1,
      maxThreads: this.#options.threads,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: this.#options.workerMemoryMb },
      idleTimeout: 1000,
    });
    return this.#isolated;
  }
}

/**
 * Where piscina's threads load the worker entry from. Compiled, it is the worker.js beside
 * this file. Under a TypeScript test runner this file is .ts and a thread cannot read
 * TypeScript by itself: it loads worker-from-source.mjs, which registers tsx's loader and
 * then src/executors/worker.ts, so the unit tests need no dist/ (vitest's own transform
 * reaches only its own threads, not these).
 */
function workerEntry(): { filename: string } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { filename: fileURLToPath(new URL('../../executors/worker.js', here)) };
  return { filename: fileURLToPath(new URL('./worker-from-source.mjs', here)) };
}
