import { kMaxBatchBytes, kMaxBatchRequests } from './batch-limits.js';

/** Attempts that come less than this apart go out in one batch… */
const kQuietMs = 200;
/** …unless the first of them has waited this long. */
const kMaxWindowMs = 5000;

/** One request of a batch: what it answers, its custom_id and its input line. */
export interface QueuedLine<T> {
  item: T;
  customId: string;
  line: string;
}

/**
 * Gathers the requests of the next batch. What the scheduler hands out in one turn (a
 * wave) goes out together, and so do requests that follow each other closely (retries,
 * spread by their jitter): a batch is sent once none came for 200 ms, or 5 s after its
 * first. A batch holds at most OpenAI's 50,000 requests and 190 MB; more are sent as
 * several.
 */
export class BatchQueue<T> {
  readonly #send: (chunk: QueuedLine<T>[]) => void;
  /** The request's line, rendered when the batch is sent; undefined drops it (its attempt was taken back). */
  readonly #render: (item: T) => { customId: string; line: string } | undefined;
  #items: T[] = [];
  #windowStart: number | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(render: (item: T) => { customId: string; line: string } | undefined, send: (chunk: QueuedLine<T>[]) => void) {
    this.#render = render;
    this.#send = send;
  }

  push(item: T): void {
    this.#items.push(item);
    const now = performance.now();
    this.#windowStart ??= now;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#flush(), Math.max(0, Math.min(kQuietMs, this.#windowStart + kMaxWindowMs - now)));
  }

  /** Takes out the waiting items `which` picks (they are not sent); returns them. */
  take(which: (item: T) => boolean): T[] {
    const taken = this.#items.filter(which);
    this.#items = this.#items.filter((item) => !which(item));
    if (this.#items.length === 0) this.clear();
    return taken;
  }

  /** Drops what waits: nothing more is sent. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#items = [];
    this.#windowStart = undefined;
  }

  #flush(): void {
    const items = this.#items;
    this.clear();
    let chunk: QueuedLine<T>[] = [];
    let bytes = 0;
    for (const item of items) {
      const rendered = this.#render(item);
      if (rendered === undefined) continue;
      const size = Buffer.byteLength(rendered.line) + 1;
      if (chunk.length === kMaxBatchRequests || (chunk.length > 0 && bytes + size > kMaxBatchBytes)) {
        this.#send(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push({ item, ...rendered });
      bytes += size;
    }
    if (chunk.length > 0) this.#send(chunk);
  }
}
