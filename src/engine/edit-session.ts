import type { TasksTable } from '../csv/tasks-table.js';
import { WaveError } from '../errors.js';
import { Journal, recoverRows } from './journal.js';
import { SessionLock } from './lock.js';
import { openSession, settlePipeline, type Session, type SessionOverrides } from './session.js';
import { checkSessionOwner, claimSession } from './session-owner.js';
import { TasksWriter } from './tasks-writer.js';
import { validateTasks } from './validate.js';
import { fillWaveColumn } from './plan.js';

/**
 * Changes a session's tasks.csv outside a run (revise): under the session lock, after the
 * journal of any earlier run is applied, and only if the result still validates. `edit`
 * returns whether to write; a dry run returns false.
 */
export function editSession<T>(
  path: string,
  edit: (table: TasksTable, session: Session) => { write: boolean; result: T },
  warn: (message: string) => void,
  overrides: SessionOverrides = {},
): T {
  const session = openSession(path, overrides);
  // Before the lock too, so that a refused tasks file never holds the other file's lock.
  checkSessionOwner(session);
  const lock = SessionLock.acquire(session.dir, warn);
  try {
    // Again under the lock: another tasks file may have claimed the folder in between.
    checkSessionOwner(session);
    const { table, writer } = TasksWriter.read(session.tasksPath, { maxRows: session.config.max_rows });
    recoverRows(table.rows, session.dir);
    settlePipeline(session, table.rows.map((row) => row.role));
    const { write, result } = edit(table, session);
    if (!write) return result;
    const report = validateTasks(table, session.config.pipeline);
    if (report.violations.length > 0) {
      throw new WaveError('INVALID_TASKS', `The change would make ${session.displayPath} invalid; nothing was written`, {
        path: session.displayPath,
        violations: report.violations,
      });
    }
    fillWaveColumn(table.rows, report.plan.waves);
    // Claimed only when something is written: a refused edit leaves the folder as it was.
    claimSession(session);
    if (!writer.write()) {
      throw new WaveError('TASKS_EDITED', `${session.displayPath} was changed while csv-wave read it; nothing was written. Try again.`, {
        path: session.displayPath,
      });
    }
    // tasks.csv now holds what the journal held.
    const journal = new Journal(session.dir);
    journal.checkpoint();
    journal.close();
    return result;
  } finally {
    lock.release();
  }
}
