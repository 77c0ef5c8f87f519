import { performance } from 'node:perf_hooks';

/**
 * The deadline of a batch's module attempts, counted from when the batch starts in its
 * worker: the thread is ended when an attempt that has not replied is past its timeout +
 * grace (it may spin, and nothing inside its thread can stop it).
 */
export class BatchBackstop {
  /** Each attempt's timeout, in batch order; 0 for none. */
  readonly #timeoutsMs: readonly number[];
  readonly #answered: readonly boolean[];
  readonly #graceMs: number;
  readonly #controller = new AbortController();
  #startedAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(timeoutsMs: readonly number[], answered: readonly boolean[], graceMs: number) {
    this.#timeoutsMs = timeoutsMs;
    this.#answered = answered;
    this.#graceMs = graceMs;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  start(): void {
    this.#startedAt ??= performance.now();
    this.#arm();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  /** Whether the attempt had not replied when the thread was ended for its deadline. */
  isLate(index: number): boolean {
    return this.#controller.signal.aborted && !this.#answered[index] && this.#due(index) <= performance.now() + 1;
  }

  /** When the attempt's thread must be ended; Infinity without a timeout or before the start. */
  #due(index: number): number {
    const timeoutMs = this.#timeoutsMs[index] ?? 0;
    if (this.#startedAt === undefined || timeoutMs <= 0) return Infinity;
    return this.#startedAt + timeoutMs + this.#graceMs;
  }

  /** A timer for the earliest deadline among the attempts still out; at it, the thread is ended if one is late. */
  #arm(): void {
    let next = Infinity;
    for (let index = 0; index < this.#timeoutsMs.length; index++) {
      if (!this.#answered[index]) next = Math.min(next, this.#due(index));
    }
    if (next === Infinity) return;
    this.#timer = setTimeout(() => {
      const now = performance.now() + 1;
      if (this.#timeoutsMs.some((_, index) => !this.#answered[index] && this.#due(index) <= now)) this.#controller.abort();
      else this.#arm();
    }, Math.max(0, next - performance.now()));
  }
}
