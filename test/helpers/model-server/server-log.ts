import { EventEmitter } from 'node:events';

/** What the server did with one chat completion, as the tests read it. */
export interface ChatRecord {
  /** 1 for the first request the server received, and so on. */
  n: number;
  /** The csv-wave task of the request (its prompt's `Task:` line), if any. */
  task: string | undefined;
  /** The request carries an earlier answer of the model: csv-wave's repair request. */
  repair: boolean;
  /** The answer's token limit the request named (max_completion_tokens or max_tokens), if any. */
  limit?: number;
  /** The HTTP status answered; undefined while the request runs and when it was aborted. */
  status?: number;
  /** The usage the answer reported; cached_tokens: prompt tokens the sequence held from its previous request. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens: number };
  finishReason?: 'stop' | 'length';
  /** The error message of a 4xx or 5xx answer. */
  error?: string;
  /** Set when the client went away first: still waiting for a sequence, or generating. */
  aborted?: 'waiting' | 'generating';
  /** Tokens generated before an abort. */
  generatedBeforeAbort?: number;
  /** When the request arrived: performance.now() of the server's process, in ms. */
  arrivedAt: number;
  /** Time waiting for a free sequence (and, paused, for resume()). */
  waitMs: number;
  /** Time inside the model: prompt evaluation and generation. */
  generationMs: number;
  /** Time from the request's arrival to its answer (or abort). */
  totalMs: number;
}

/**
 * The server's own record of every chat completion, and its concurrency. It emits `change`
 * after every update, so a test waits for a state (`until`) instead of for time.
 */
export class ModelServerLog extends EventEmitter {
  readonly records: ChatRecord[] = [];
  /** Requests received and not yet answered (waiting or generating). */
  inFlight = 0;
  peakInFlight = 0;
  /** Requests holding a sequence of the context. */
  generating = 0;
  peakGenerating = 0;

  /** Records of answered requests (any status). */
  answered(): ChatRecord[] {
    return this.records.filter((record) => record.status !== undefined);
  }

  /** Records of requests whose client went away before the answer. */
  aborted(): ChatRecord[] {
    return this.records.filter((record) => record.aborted !== undefined);
  }

  /** Records of requests still running. */
  running(): ChatRecord[] {
    return this.records.filter((record) => record.status === undefined && record.aborted === undefined);
  }

  /** Resolves once `condition` holds (checked now and after every change). */
  until(condition: (log: ModelServerLog) => boolean): Promise<void> {
    if (condition(this)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!condition(this)) return;
        this.off('change', check);
        resolve();
      };
      this.on('change', check);
    });
  }

  /** @internal the server's bookkeeping */
  start(task: string | undefined, repair: boolean, arrivedAt: number): ChatRecord {
    const record: ChatRecord = { n: this.records.length + 1, task, repair, arrivedAt, waitMs: 0, generationMs: 0, totalMs: 0 };
    this.records.push(record);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    this.emit('change');
    return record;
  }

  /** @internal */
  startGenerating(): void {
    this.generating++;
    this.peakGenerating = Math.max(this.peakGenerating, this.generating);
    this.emit('change');
  }

  /** @internal */
  stopGenerating(): void {
    this.generating--;
  }

  /** @internal */
  finish(record: ChatRecord, update: Partial<ChatRecord>): void {
    Object.assign(record, update);
    this.inFlight--;
    this.emit('change');
  }
}
