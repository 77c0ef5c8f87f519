import { describe } from '../../executors/module.js';
import type { ErrorClass } from '../../executors/types.js';
import { isTerminal, type Batch, type BatchApi } from './batch-api.js';
import { readOutputLines, type OutputLine } from './batch-lines.js';

/** What a poll shows of a batch (the `batch:progress` event). */
export interface BatchProgress {
  batch: string;
  status: Batch['status'];
  completed: number;
  failed: number;
  total: number;
}

/** A batch that will change no more: its output and error lines, and what a request without a line gets. */
export interface EndedBatch {
  batch: string;
  lines: Map<string, OutputLine>;
  missing: { errorClass: ErrorClass; error: string };
}

export interface WatchOptions {
  maxPollMs: number;
  /** Aborted: polling stops, and the batch is left as it is (ended() resolves undefined). */
  signal: AbortSignal;
  progress: (progress: BatchProgress) => void;
  warn: (message: string) => void;
}

/** The first wait between polls; it doubles while nothing changes, up to maxPollMs. */
const kFirstPollMs = 1000;

/**
 * Polls one batch until it ends, with backoff: the wait doubles while its request counts
 * do not move and starts over when they do. A poll that fails (the network, a 5xx) is
 * tried again at the next one, with a warning the first time; a batch the server does not
 * know (404) ends with no answers, its requests retried. Then its output and error files
 * are downloaded (again at the next poll if that fails).
 */
export class BatchWatch {
  readonly #api: BatchApi;
  readonly #batchId: string;
  readonly #options: WatchOptions;
  readonly #ended: Promise<EndedBatch | undefined>;

  constructor(api: BatchApi, batchId: string, options: WatchOptions) {
    this.#api = api;
    this.#batchId = batchId;
    this.#options = options;
    this.#ended = this.#poll();
  }

  ended(): Promise<EndedBatch | undefined> {
    return this.#ended;
  }

  async #poll(): Promise<EndedBatch | undefined> {
    const { signal, maxPollMs } = this.#options;
    let wait = Math.min(kFirstPollMs, maxPollMs);
    let seen = '';
    let warned = false;
    for (;;) {
      let batch: Batch;
      try {
        batch = await this.#api.retrieve(this.#batchId, signal);
        if (isTerminal(batch)) return await this.#collect(batch);
      } catch (error) {
        if (signal.aborted) return undefined;
        if ((error as { status?: unknown }).status === 404) {
          return { batch: this.#batchId, lines: new Map(), missing: { errorClass: 'transient', error: `the server does not know batch ${this.#batchId} (HTTP 404)` } };
        }
        if (!warned) this.#options.warn(`Polling batch ${this.#batchId} failed (${describe(error)}); trying again`);
        warned = true;
        if (!(await pause(wait, signal))) return undefined;
        wait = Math.min(wait * 2, maxPollMs);
        continue;
      }
      const counts = batch.request_counts ?? { completed: 0, failed: 0, total: 0 };
      const now = `${batch.status} ${counts.completed} ${counts.failed} ${counts.total}`;
      if (now !== seen) {
        seen = now;
        wait = Math.min(kFirstPollMs, maxPollMs);
        this.#options.progress({ batch: this.#batchId, status: batch.status, ...counts });
      } else {
        wait = Math.min(wait * 2, maxPollMs);
      }
      if (!(await pause(wait, signal))) return undefined;
    }
  }

  /** The ended batch's files read; what its status means for a request that has no line in them. */
  async #collect(batch: Batch): Promise<EndedBatch> {
    const counts = batch.request_counts ?? { completed: 0, failed: 0, total: 0 };
    this.#options.progress({ batch: batch.id, status: batch.status, ...counts });
    const texts: string[] = [];
    for (const file of [batch.output_file_id, batch.error_file_id]) {
      if (file) texts.push(await this.#api.download(file, this.#options.signal));
    }
    return { batch: batch.id, lines: readOutputLines(...texts), missing: missingAnswer(batch) };
  }
}

/** An expired or cancelled batch's unanswered requests are retried; a failed batch (its input refused) fails them with its errors. */
function missingAnswer(batch: Batch): EndedBatch['missing'] {
  switch (batch.status) {
    case 'failed': {
      const errors = (batch.errors?.data ?? []).map((error) => `${error.line === undefined || error.line === null ? '' : `line ${error.line}: `}${error.message ?? error.code ?? 'error'}`);
      return { errorClass: 'task-failure', error: `batch ${batch.id} failed: ${errors.join('; ') || 'no reason given'}` };
    }
    case 'expired':
      return { errorClass: 'transient', error: `batch ${batch.id} expired (its 24h window ended) before this request ran` };
    case 'cancelled':
      return { errorClass: 'transient', error: `batch ${batch.id} was cancelled before this request ran` };
    default:
      return { errorClass: 'transient', error: `batch ${batch.id} ended (${batch.status}) without an answer to this request` };
  }
}

/** Waits `ms`; false when the signal ended the wait. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
