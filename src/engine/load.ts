import { readTasksFile } from '../csv/parse-tasks.js';
import type { TasksTable } from '../csv/tasks-table.js';
import { WaveError } from '../errors.js';
import { openSession, settlePipeline, type Session, type SessionOverrides } from './session.js';
import { validateTasks, type TaskPlan } from './validate.js';

export interface LoadedSession {
  session: Session;
  table: TasksTable;
  plan: TaskPlan;
}

/**
 * Opens a session, reads its tasks.csv and validates it. Any problem becomes a WaveError
 * that lists every violation with its line (code INVALID_TASKS, CSV_PARSE, …).
 */
export function loadSession(pathArgument: string, overrides: SessionOverrides = {}): LoadedSession {
  const session = openSession(pathArgument, overrides);
  const table = readSessionTasks(session);
  settlePipeline(session, table.rows.map((row) => row.role));
  if (session.config.bom) table.format.bom = true;
  const report = validateTasks(table, session.config.pipeline);
  if (report.violations.length > 0) {
    throw new WaveError('INVALID_TASKS', `${report.violations.length} problem(s) in ${session.displayPath}`, {
      path: session.displayPath,
      violations: report.violations,
    });
  }
  return { session, table, plan: report.plan };
}

/** The session's tasks.csv; a read or parse error names the file as the user did. */
export function readSessionTasks(session: Session): TasksTable {
  try {
    return readTasksFile(session.tasksPath, { maxRows: session.config.max_rows });
  } catch (error) {
    if (error instanceof WaveError) {
      throw new WaveError(error.code, error.message, {
        path: session.displayPath,
        violations: error.violations,
        cause: error,
      });
    }
    throw error;
  }
}
