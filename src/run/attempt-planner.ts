import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { rowCells } from '../csv/tasks-table.js';
import type { ExecutorSpec, WorkerRequest } from '../executors/messages.js';
import { PrevContexts } from './prev-contexts.js';

/** What every request of a run shares. */
export interface PlanOptions {
  executor: ExecutorSpec;
  sessionDir: string;
  timeoutMs: number;
  prevContextCap: number;
}

/**
 * Builds the request of each attempt from the session's rows as they stand when it
 * starts: the row, its dependencies' states and its prev_context. The prev_context comes
 * from `contexts`, which the run's wave files read too (PrevContexts): a task's requests
 * and its wave file's cell are one text, built once.
 */
export class AttemptPlanner {
  readonly #options: PlanOptions;
  readonly #lookup: (id: string) => TaskRow | undefined;
  readonly contexts: PrevContexts;

  /** `lookup` finds any row of the session by id, dynamic tasks included. */
  constructor(options: PlanOptions, lookup: (id: string) => TaskRow | undefined) {
    this.#options = options;
    this.#lookup = lookup;
    this.contexts = new PrevContexts(lookup, options.prevContextCap);
  }

  request(row: TaskRow, wave: number, attempt: number, isolated: boolean): WorkerRequest {
    const { executor, sessionDir, timeoutMs } = this.#options;
    const deps = splitList(row.deps).flatMap((id) => {
      const dep = this.#lookup(id);
      return dep ? [{ id, status: dep.status, findings: dep.findings }] : [];
    });
    return {
      executor,
      task: { id: row.id, wave, attempt, session: sessionDir, row: rowCells(row), prev_context: this.contexts.of(row) },
      deps,
      timeoutMs,
      // After a worker died under it, the task runs alone: if it was the cause, it dies alone.
      ...(isolated ? { isolated: true } : {}),
    };
  }
}
