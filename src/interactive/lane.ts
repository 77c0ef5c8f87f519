import type { TaskRow } from '../csv/tasks-file.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { AnswerSource, HandlerResult, InteractiveContext, InteractiveHandler } from './types.js';

export interface LaneSetup {
  handlers: ReadonlyMap<string, InteractiveHandler>;
  /** The session's rows as they stand when a task starts. */
  rows: () => readonly TaskRow[];
  config: InteractiveContext['config'];
  sessionDir: string;
  runExecutor: (request: WorkerRequest) => Promise<WorkerReply>;
  answers: AnswerSource;
}

/**
 * The interactive lane: a role with a handler (the GC controller, the discussion gate) is
 * run by it, in the main thread; any other interactive task goes through the configured
 * executor like a csv-wave task. The scheduler hands the lane one task at a time.
 */
export class InteractiveLane {
  readonly #setup: LaneSetup;

  constructor(setup: LaneSetup) {
    this.#setup = setup;
  }

  async run(request: WorkerRequest): Promise<HandlerResult> {
    const setup = this.#setup;
    const handler = setup.handlers.get(request.task.row.role ?? '');
    if (!handler) return { reply: await setup.runExecutor(request) };
    return handler.run(request, {
      rows: setup.rows(),
      config: setup.config,
      sessionDir: setup.sessionDir,
      runExecutor: setup.runExecutor,
      answers: setup.answers,
    });
  }
}
