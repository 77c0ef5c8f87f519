import type { TasksTable } from '../csv/tasks-table.js';
import { readJournal, replayJournal } from '../session/journal.js';
import { readSessionTasks } from '../session/prepare-session.js';
import { settlePipeline, type Session } from '../session/session.js';
import { withPipelineColumns } from '../pipelines/pipeline-columns.js';
import { checkSessionOwner } from '../session/session-owner.js';

/**
 * The session's tasks as they stand, also while a run goes on: tasks.csv with the
 * journal's entries applied in memory. Read-only and without the lock: nothing is written,
 * so a report or the live view never gets in a run's way. A tasks.csv caught between two
 * atomic rewrites does not exist (rename), so every read sees a whole file. The journal
 * belongs to the folder's own tasks file: another file in the folder is refused (USAGE),
 * never shown with the first one's results.
 */
export function currentTasks(session: Session): TasksTable {
  checkSessionOwner(session);
  const table = readSessionTasks(session);
  replayJournal(table.rows, readJournal(session.dir));
  // The columns a run writes, as the run shows them, even before the first run of a plain batch.
  const pipeline = settlePipeline(session, table.rows.map((row) => row.role));
  withPipelineColumns(table, pipeline, session.displayPath, false);
  return table;
}
