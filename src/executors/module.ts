import { pathToFileURL } from 'node:url';
import type { AttemptOutcome, ErrorClass, Executor, ExecutorRunOptions, TaskInput } from './types.js';

/** What a task module's default export receives besides the task. */
export interface ModuleTaskContext {
  /** Aborted when the attempt times out or the run is stopped. */
  signal: AbortSignal;
  attempt: number;
  session: string;
}

export type TaskModule = (task: TaskInput, context: ModuleTaskContext) => unknown;

const kClasses = new Set<ErrorClass>(['rate-limited', 'transient', 'timeout', 'invalid-output', 'task-failure']);

/**
 * Runs a task with the default export of a JS module, `async (task, ctx) => result`,
 * imported once per worker thread. A module that throws fails the task; an Error with an
 * `errorClass` property ('transient', 'rate-limited', …) and an optional `retryAfterMs`
 * is classified so, which lets a module ask for a retry.
 */
export class ModuleExecutor implements Executor {
  readonly #path: string;
  #loaded: Promise<TaskModule> | undefined;

  /** @param path absolute path of the module */
  constructor(path: string) {
    this.#path = path;
  }

  async run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome> {
    let run: TaskModule;
    try {
      run = await this.#load();
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }
    const signal = new LazySignal(options.signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout =
      options.timeoutMs > 0
        ? new Promise<AttemptOutcome>((resolve) => {
            timer = setTimeout(() => {
              const error = `Timed out after ${options.timeoutMs / 1000}s`;
              resolve({ kind: 'error', errorClass: 'timeout', error });
              signal.abort(new Error(error));
            }, options.timeoutMs);
          })
        : undefined;
    const attempt = (async (): Promise<AttemptOutcome> => {
      try {
        const result = await run(task, signal.context(task));
        return { kind: 'result', result };
      } catch (error) {
        return classify(error);
      }
    })();
    try {
      return timeout ? await Promise.race([attempt, timeout]) : await attempt;
    } finally {
      clearTimeout(timer);
      signal.release();
    }
  }

  #load(): Promise<TaskModule> {
    this.#loaded ??= import(pathToFileURL(this.#path).href).then((namespace: { default?: unknown }) => {
      if (typeof namespace.default !== 'function') {
        throw new Error(`${this.#path} has no default export function: export default async (task, ctx) => result`);
      }
      return namespace.default as TaskModule;
    });
    return this.#loaded;
  }
}

function classify(error: unknown): AttemptOutcome {
  const claimed = (error as { errorClass?: unknown } | null)?.errorClass;
  const retryAfterMs = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  const errorClass = kClasses.has(claimed as ErrorClass) ? (claimed as ErrorClass) : 'task-failure';
  return {
    kind: 'error',
    errorClass,
    error: describe(error),
    ...(typeof retryAfterMs === 'number' ? { retryAfterMs } : {}),
  };
}

/** A thrown value as text: an Error's message, or the value itself for `throw 'text'` and the like. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return `Non-Error thrown: ${JSON.stringify(error)}`;
  } catch {
    return `Non-Error thrown: ${String(error)}`;
  }
}

/**
 * The module's `ctx.signal`, made when the module first reads it: most modules never do,
 * and an AbortController with its listener on the run's signal is a real share of a short
 * task's cost (BENCHMARKS.md). It also fires at the timeout: an attempt given up on should
 * stop its work (requests, child processes) rather than go on beside its own retry.
 */
class LazySignal {
  readonly #outer: AbortSignal;
  #controller: AbortController | undefined;
  #reason: unknown = undefined;
  #aborted = false;
  readonly #onAbort = () => this.abort(this.#outer.reason);

  constructor(outer: AbortSignal) {
    this.#outer = outer;
  }

  context(task: TaskInput): ModuleTaskContext {
    const signal = () => this.#signal();
    return {
      get signal() {
        return signal();
      },
      attempt: task.attempt,
      session: task.session,
    };
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }

  /** Stops listening to the run's signal once the attempt is over. */
  release(): void {
    if (this.#controller) this.#outer.removeEventListener('abort', this.#onAbort);
  }

  #signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#outer.aborted) this.abort(this.#outer.reason);
      if (this.#aborted) this.#controller.abort(this.#reason);
      else this.#outer.addEventListener('abort', this.#onAbort, { once: true });
    }
    return this.#controller.signal;
  }
}
