import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

type Waiter = (sequence: LlamaContextSequence) => void;

/**
 * The context's sequences, one per request being generated; requests beyond them wait in
 * arrival order, as a llama.cpp server's requests wait for a free slot. A waiting request
 * whose signal aborts leaves the queue.
 */
export class SequencePool {
  readonly #free: LlamaContextSequence[] = [];
  readonly #waiting: Waiter[] = [];

  constructor(context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.#free.push(context.getSequence());
  }

  acquire(signal: AbortSignal): Promise<LlamaContextSequence> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const sequence = this.#free.pop();
    if (sequence !== undefined) return Promise.resolve(sequence);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = (taken) => {
        signal.removeEventListener('abort', onAbort);
        resolve(taken);
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /**
   * The sequence keeps what it evaluated: the next request on it evaluates only what differs
   * from its prompt (the system prompt is shared), as llama.cpp's prompt cache does.
   */
  release(sequence: LlamaContextSequence): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free.push(sequence);
    else next(sequence);
  }
}
