import type { TasksTable } from '../csv/tasks-table.js';
import { planTasks, prepareSession } from './prepare-session.js';
import { openSession, type Session, type SessionOverrides } from './session.js';
import type { TaskPlan } from './validate.js';

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
  const read = prepareSession(session, { bom: session.config.bom });
  return { ...read, plan: planTasks(read) };
}
