import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';

type Waiter = (sequence: LlamaContextSequence) => void;

/**
 * The context's sequences, one per request being generated; requests beyond them wait in
 * arrival order, as a llama.cpp server's requests wait for a free slot. A waiting request
 * whose signal aborts leaves the queue.
 *
 * Of the free sequences a request takes the one whose cached tokens share the longest start
 * with its prompt, as llama-server picks a slot by prompt similarity: a repair request then
 * finds its first request's prompt still evaluated. Evaluating a prompt costs about the square
 * of its length on this model (2,000 tokens: 4 s of CPU, 500: 0.4 s), so on a loaded machine
 * this is most of what a test run asks of the model.
 */
export class SequencePool {
  readonly #free: LlamaContextSequence[] = [];
  readonly #waiting: Waiter[] = [];
  readonly #bos: Token | null;

  constructor(context: LlamaContext) {
    this.#bos = context.model.tokens.bos;
    for (let i = 0; i < context.totalSequences; i++) this.#free.push(context.getSequence());
  }

  acquire(prompt: readonly Token[], signal: AbortSignal): Promise<LlamaContextSequence> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#free.length > 0) {
      const shared = this.#free.map((sequence) => this.#sharedStart(sequence.contextTokens, prompt));
      const best = shared.indexOf(Math.max(...shared));
      return Promise.resolve(this.#free.splice(best, 1)[0]!);
    }
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

  /** How many tokens of `prompt` a sequence holding `held` has evaluated (the completion put a BOS before the prompt it was given). */
  #sharedStart(held: readonly Token[], prompt: readonly Token[]): number {
    const from = held[0] === this.#bos && prompt[0] !== this.#bos ? 1 : 0;
    let n = 0;
    while (from + n < held.length && n < prompt.length && held[from + n] === prompt[n]) n++;
    return n;
  }
}
