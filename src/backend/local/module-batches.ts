import { BroadcastChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import type { BatchNews, BatchReplies, PoolBatch } from '../../executors/pool-batch.js';
import { BatchBackstop } from './batch-backstop.js';
import { backstopReply, crashReply, readReply } from './pool-replies.js';

export interface ModuleBatchOptions {
  threads: number;
  tasksPerThread: number;
  /** Extra time a module gets past its timeout before its thread is ended (it may be spinning). */
  graceMs: number;
}

/** The worker's export that runs a batch (executors/worker.ts). */
const kBatchEntry = 'replyBatch';

/**
 * The most attempts in one message: the raw loop measured 32 per message about
 * twice as fast as one; a bigger batch saves little more and holds more tasks to one thread.
 */
const kMaxBatch = 32;

/**
 * The fewest attempts a batch is cut down to when a tick's submits are shared among the
 * threads, so that batches do not halve down to one task each as replies come back in
 * pieces. A judgement, not tuned: this machine was too loaded to tell 8 from 16.
 */
const kMinShare = 8;

/** Channels made by this process, for unique names: two runs of one process never hear each other. */
let channels = 0;

interface Waiting {
  request: AttemptRequest;
  resolve: (reply: AttemptReply) => void;
}

/**
 * Sends module attempts to the pool in batches: the submits of one tick of the main thread
 * go together (setImmediate), shared among the threads, at most `tasksPerThread` (and
 * kMaxBatch) in one batch. The worker runs a batch's attempts at once and sends back the
 * replies that are ready at the end of each of its ticks, so a long attempt holds no short
 * one back. A batch's deadline backstop, its worker dying, and replies that do not read are
 * handled per attempt: each attempt whose reply arrived keeps it; only the others fail.
 * A batch with a timeout is abortable, and piscina runs an abortable task alone on its
 * thread: with --timeout a thread runs one batch at a time (before batches: one task).
 */
export class ModuleBatches {
  readonly #pool: Piscina<PoolBatch, BatchReplies>;
  readonly #options: ModuleBatchOptions;
  #waiting: Waiting[] = [];
  /** The batches' news, one channel for all of them (a MessageChannel each cost as much as their no-op tasks). */
  readonly #channel: BroadcastChannel;
  readonly #channelName = `csv-wave:batches:${process.pid}:${++channels}`;
  /** What to do with a running batch's news, by its number. */
  readonly #listening = new Map<number, (news: BatchNews) => void>();
  #nextBatch = 0;
  #closed = false;

  constructor(pool: Piscina<PoolBatch, BatchReplies>, options: ModuleBatchOptions) {
    this.#pool = pool;
    this.#options = options;
    this.#channel = new BroadcastChannel(this.#channelName);
    // The pool's threads keep the process alive while they work; the channel need not.
    this.#channel.unref();
    this.#channel.onmessage = (event) => this.#hear((event as MessageEvent).data);
  }

  /** No more batches: the channel closes (the pool is destroyed by its owner). */
  close(): void {
    this.#closed = true;
    this.#channel.close();
  }

  run(request: AttemptRequest): Promise<AttemptReply> {
    return new Promise((resolve) => {
      if (this.#waiting.length === 0) setImmediate(() => this.#flush());
      this.#waiting.push({ request, resolve });
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    const { threads, tasksPerThread } = this.#options;
    const share = Math.max(kMinShare, Math.ceil(waiting.length / threads));
    const size = Math.max(1, Math.min(kMaxBatch, tasksPerThread, share));
    for (let start = 0; start < waiting.length; start += size) void this.#send(waiting.slice(start, start + size));
  }

  async #send(batch: Waiting[]): Promise<void> {
    const answered = new Array<boolean>(batch.length).fill(false);
    const answer = (replies: unknown) => {
      if (!Array.isArray(replies)) return;
      for (let at = 0; at + 1 < replies.length; at += 2) {
        const index = replies[at] as number;
        const waiting = batch[index];
        if (!waiting || answered[index]) continue;
        answered[index] = true;
        waiting.resolve(readReply(replies[at + 1]));
      }
    };
    const backstop = new BatchBackstop(batch.map((waiting) => waiting.request.timeoutMs), answered, this.#options.graceMs);
    const number = this.#nextBatch++;
    this.#listening.set(number, (news) => ('started' in news ? backstop.start() : answer(news.replies)));
    let failure: unknown = undefined;
    let failed = false;
    try {
      const requests = batch.map((waiting) => waiting.request);
      // Only a batch with a deadline may be aborted: piscina runs such a task alone on its thread.
      const abortable = requests.some((request) => request.timeoutMs > 0);
      const replies = await this.#pool.run(
        { requests, channel: this.#channelName, batch: number },
        { name: kBatchEntry, ...(abortable ? { signal: backstop.signal } : {}) },
      );
      // The channel's news was posted before this return value: it is in its queue already.
      this.#drain();
      answer(replies);
    } catch (error) {
      this.#drain();
      failure = error;
      failed = true;
    } finally {
      this.#listening.delete(number);
      backstop.stop();
    }
    batch.forEach((waiting, index) => {
      if (answered[index]) return;
      const { request } = waiting;
      if (backstop.isLate(index)) waiting.resolve(backstopReply(request, this.#options.tasksPerThread));
      else waiting.resolve(crashReply(failed ? failure : new Error('its reply never arrived')));
    });
  }

  /** Hears what is queued on the channel now (news of any batch: each goes to its own). */
  #drain(): void {
    // A batch the pool's destruction failed may settle after close: the channel is gone, and so is its news.
    if (this.#closed) return;
    // Node takes a BroadcastChannel here (since 15.12); @types/node 20 names only MessagePort.
    const channel = this.#channel as unknown as MessagePort;
    for (let received = receiveMessageOnPort(channel); received; received = receiveMessageOnPort(channel)) {
      this.#hear(received.message);
    }
  }

  #hear(news: unknown): void {
    const batch = (news as Partial<BatchNews> | null)?.batch;
    if (typeof batch === 'number') this.#listening.get(batch)?.(news as BatchNews);
  }
}

