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
    // The module's signal also fires at the timeout: an attempt given up on should stop its
    // work (requests, child processes) rather than go on beside its own retry.
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<AttemptOutcome>((resolve) => {
      if (options.timeoutMs > 0) {
        timer = setTimeout(() => {
          const error = `Timed out after ${options.timeoutMs / 1000}s`;
          resolve({ kind: 'error', errorClass: 'timeout', error });
          controller.abort(new Error(error));
        }, options.timeoutMs);
      }
    });
    const attempt = (async (): Promise<AttemptOutcome> => {
      try {
        const result = await run(task, { signal: controller.signal, attempt: task.attempt, session: task.session });
        return { kind: 'result', result };
      } catch (error) {
        return classify(error);
      }
    })();
    try {
      return await Promise.race([attempt, timeout]);
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
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
