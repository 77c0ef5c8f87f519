/**
 * Holds requests after the first `after` unanswered until `open()`, as a server busy with
 * other work would: the tests use it to have requests in flight at a moment of their
 * choosing (a Ctrl-C "in the middle" of a run), without any timing. A held request whose
 * signal aborts is let go.
 */
export class HoldGate {
  readonly #after: number;
  #open: boolean;
  readonly #held = new Set<() => void>();

  constructor(after: number | undefined) {
    this.#after = after ?? Number.POSITIVE_INFINITY;
    this.#open = after === undefined;
  }

  /** Resolves at once for request `n` ≤ `after` or once the gate is open; rejects when `signal` aborts first. */
  pass(n: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#open || n <= this.#after) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const release = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#held.delete(release);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#held.add(release);
    });
  }

  /** How many requests are held now. */
  get held(): number {
    return this.#held.size;
  }

  open(): void {
    this.#open = true;
    for (const release of this.#held) release();
    this.#held.clear();
  }
}
