import { join } from 'node:path';
import type { TaskRow } from '../core/task.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { AnswerSource, HandlerResult, InteractiveContext, InteractiveHandler } from './types.js';
import { kLayout, type SessionFileWriter } from '../layout.js';

export interface LaneSetup {
  handlers: ReadonlyMap<string, InteractiveHandler>;
  /** The session's rows as they stand when a task starts. */
  rows: () => readonly TaskRow[];
  config: InteractiveContext['config'];
  sessionDir: string;
  /** The session layer's writer: the lane's result files, and its handlers', go through it. */
  files: SessionFileWriter;
  runExecutor: (request: WorkerRequest) => Promise<WorkerReply>;
  answers: AnswerSource;
  /** Tells the run each gate's decision (InteractiveContext.decided). */
  decided?: InteractiveContext['decided'];
}

/**
 * The interactive lane: a role with a handler (the GC controller, the discussion gate) is
 * run by it, in the main thread; any other interactive task goes through the configured
 * executor like a csv-wave task. The scheduler hands the lane one task at a time. Each
 * attempt leaves `interactive/<id>-result.json` (DESIGN.md section 1).
 */
export class InteractiveLane {
  readonly #setup: LaneSetup;

  constructor(setup: LaneSetup) {
    this.#setup = setup;
  }

  async run(request: WorkerRequest): Promise<HandlerResult> {
    const setup = this.#setup;
    const handler = setup.handlers.get(request.task.row.role ?? '');
    let result: HandlerResult;
    try {
      result = handler
        ? await handler.run(request, {
            rows: setup.rows(),
            config: setup.config,
            sessionDir: setup.sessionDir,
            files: setup.files,
            runExecutor: setup.runExecutor,
            answers: setup.answers,
            ...(setup.decided === undefined ? {} : { decided: setup.decided }),
          })
        : { reply: await setup.runExecutor(request) };
    } catch (error) {
      writeResultFile(setup.files, request.task.id, 'failed', {});
      throw error;
    }
    const status = result.reply.kind === 'finished' ? result.reply.status : 'failed';
    writeResultFile(setup.files, request.task.id, status, result.record ?? {});
    return result;
  }
}

function writeResultFile(files: SessionFileWriter, taskId: string, status: string, record: Record<string, unknown>): void {
  const content = { task_id: taskId, status, ...record, timestamp: new Date().toISOString() };
  files.write(join(kLayout.interactive, `${taskId}-result.json`), `${JSON.stringify(content, null, 2)}\n`);
}
