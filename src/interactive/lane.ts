import type { WorkerReply, WorkerRequest } from '../executors/messages.js';

/** Runs the interactive tasks of one role (the GC controller, the discussion gate). */
export interface InteractiveHandler {
  run(request: WorkerRequest): Promise<WorkerReply>;
}

/**
 * The interactive lane: one task at a time, in the main thread. A role with a handler is
 * run by it; any other interactive task goes through the configured executor like a
 * csv-wave task, still one at a time.
 */
export class InteractiveLane {
  readonly #handlers: ReadonlyMap<string, InteractiveHandler>;
  readonly #fallback: (request: WorkerRequest) => Promise<WorkerReply>;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(
    handlers: ReadonlyMap<string, InteractiveHandler>,
    fallback: (request: WorkerRequest) => Promise<WorkerReply>,
  ) {
    this.#handlers = handlers;
    this.#fallback = fallback;
  }

  run(request: WorkerRequest): Promise<WorkerReply> {
    const handler = this.#handlers.get(request.task.row.role ?? '');
    const next = this.#tail.then(() => (handler ? handler.run(request) : this.#fallback(request)));
    this.#tail = next.catch(() => undefined);
    return next;
  }
}
