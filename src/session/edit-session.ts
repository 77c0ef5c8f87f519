import type { TasksTable } from '../csv/tasks-table.js';
import { Journal, readOpenBatches } from './journal.js';
import { openSession, type Session, type SessionOverrides } from './session.js';
import { planTasks, prepareSession, writeFirst } from './prepare-session.js';
import { fillWaveColumn } from '../core/wave-column.js';

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
  const held = prepareSession(session, { hold: { warn, run: false } });
  try {
    const { write, result } = edit(held.table, session);
    if (!write) return result;
    const plan = planTasks(held, `The change would make ${session.displayPath} invalid; nothing was written`);
    fillWaveColumn(held.table.rows, plan.waves);
    // Claimed only when something is written: a refused edit leaves the folder as it was.
    writeFirst(held, {
      edited: `${session.displayPath} was changed while csv-wave read it; nothing was written. Try again.`,
    });
    // tasks.csv now holds what the journal held, but for the batches a --batch run left open.
    const journal = new Journal(session.dir);
    journal.carry(readOpenBatches(session.dir));
    journal.checkpoint();
    journal.close();
    return result;
  } finally {
    held.lock.release();
  }
}
