import { existsSync, readFileSync, statSync } from 'node:fs';
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
  /** The artifacts of tasks, for a gate that validates them (InteractiveContext.artifactsOf). */
  artifactsOf?: InteractiveContext['artifactsOf'];
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
            ...(setup.artifactsOf === undefined ? {} : { artifactsOf: setup.artifactsOf }),
          })
        : { reply: await setup.runExecutor(request) };
    } catch (error) {
      writeResultFile(setup.files, request.task.id, 'failed', {});
      throw error;
    }
    const status = result.reply.kind === 'finished' ? result.reply.status : 'failed';
    // How far an answers file was read: a resume goes on from there, not from its first item.
    const position = handler ? setup.answers.position?.() : undefined;
    writeResultFile(setup.files, request.task.id, status, { ...result.record, ...(position === undefined ? {} : { answers: position }) });
    return result;
  }

  /**
   * Before a run: an answers file goes on after the answers the session's finished gates
   * used (the positions their result files recorded), so that a resume after a kill asks
   * the next question of the file, not its first again. A result file that cannot be read is passed over.
   */
  resumeAnswers(rows: readonly TaskRow[]): void {
    const { answers, handlers, sessionDir } = this.#setup;
    if (answers.resumeAfter === undefined) return;
    const positions: unknown[] = [];
    for (const row of rows) {
      if (row.status !== 'completed' || row.exec_mode !== 'interactive' || !handlers.has(row.role)) continue;
      const path = join(sessionDir, kLayout.interactive, `${row.id}-result.json`);
      // The lane writes a few hundred bytes; a bigger file is not its own.
      if (!existsSync(path) || statSync(path).size > 64 * 1024) continue;
      try {
        positions.push((JSON.parse(readFileSync(path, 'utf8')) as { answers?: unknown }).answers);
      } catch {
        // Not the lane's file any more (edited, cut): its answers are not counted.
      }
    }
    answers.resumeAfter(positions);
  }
}

function writeResultFile(files: SessionFileWriter, taskId: string, status: string, record: Record<string, unknown>): void {
  const content = { task_id: taskId, status, ...record, timestamp: new Date().toISOString() };
  files.write(join(kLayout.interactive, `${taskId}-result.json`), `${JSON.stringify(content, null, 2)}\n`);
}
