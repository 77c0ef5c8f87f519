import type { SessionEdit, TaskStanding } from '../../core/session-changes.js';
import type { TaskRow } from '../../core/task.js';
import { cellReader, type TasksTable } from '../../csv/tasks-table.js';
import type { Violation } from '../../errors.js';
import type { TasksEditedEvent } from '../../events/events.js';
import type { Journal } from '../journal.js';
import type { EditLedger } from './edit-ledger.js';
import { planMerge, type MergePlan } from './edit-merge.js';

/** What a run offers an edit of tasks.csv: where its tasks stand, and taking a change (the scheduler). */
export interface EditTarget {
  standing(id: string): TaskStanding | undefined;
  /** Applies the run's part of a save (journaled, told, then anything it made ready starts); returns why it was refused, or undefined. */
  edit(edit: SessionEdit): string | undefined;
}

export interface EditIntakeSetup {
  /** The run's table, which tasks.csv is written from. */
  table: TasksTable;
  target: EditTarget;
  journal: Journal;
  ledger: EditLedger;
  /** The checks of a run's start over a merged table, every violation at its line. */
  check: (table: TasksTable) => readonly Violation[];
  /** tasks.csv as messages name it. */
  displayPath: string;
  /** The session as the user named it, for the commands the messages suggest. */
  path: string;
  warn: (message: string) => void;
  /** Told what a save changed (the run's `[EDIT]` line), before the warnings about what it kept. */
  edited: (event: TasksEditedEvent) => void;
}

/**
 * Takes a person's save of tasks.csv into a running session: merges it (edit-merge.ts),
 * journals the cells the run keeps, hands what it takes to the scheduling core (journaled
 * there, before any task starts on it), and lays the table out as the save did, so that
 * the next write of tasks.csv shows the save with the run's cells, and nothing else moved.
 */
export class EditIntake {
  readonly #setup: EditIntakeSetup;

  constructor(setup: EditIntakeSetup) {
    this.#setup = setup;
  }

  /** Merges `saved` (read with its text) into the run. The caller writes tasks.csv next. */
  merge(saved: TasksTable): void {
    const { table, target, journal, ledger, check, displayPath, path } = this.#setup;
    const plan = (takeNothing?: string) =>
      planMerge({ memory: table, saved, standing: (id) => target.standing(id), ledger, check, displayPath, path, ...(takeNothing === undefined ? {} : { takeNothing }) });
    let merged = plan();
    // The cells the run keeps are in the journal before tasks.csv is rewritten: a kill in
    // between leaves the saved file, and a resume puts them back over it.
    for (const entry of merged.journal) journal.append(entry);
    if (!isEmpty(merged.edit)) {
      const problem = target.edit(merged.edit);
      if (problem !== undefined) {
        merged = plan(`the run could not take it: ${problem}; save the file again`);
        for (const entry of merged.journal) journal.append(entry);
      }
    }
    journal.flush();
    adopt(table, merged, saved);
    this.#setup.edited({ file: displayPath, ...merged.taken, notices: merged.notices });
    for (const notice of merged.notices) this.#setup.warn(notice);
  }
}

function isEmpty(edit: SessionEdit): boolean {
  return edit.add.length + edit.update.length + edit.remove.length === 0;
}

/**
 * The table laid out as the save has it: its rows in the saved order (with the rows the
 * run kept where they were), its columns, its line ends, BOM and delimiter, and its text
 * for every row that reads the same as the run's, so that the rewrite leaves it byte for byte.
 */
function adopt(table: TasksTable, plan: MergePlan, saved: TasksTable): void {
  const placed = new Set(plan.order);
  // Rows of the table the plan does not place (none, unless a change came in between) go last.
  const rest = table.rows.filter((row) => !placed.has(row));
  table.rows.length = 0;
  for (const row of plan.order) table.rows.push(row);
  for (const row of rest) table.rows.push(row);
  table.columns = plan.columns;
  table.format = saved.format;
  const text = saved.saved;
  if (text === undefined || !text.fits(plan.columns)) {
    delete table.saved;
    return;
  }
  const cells = plan.columns.map(cellReader);
  for (const { row, saved: savedRow } of plan.matched) {
    if (sameCells(row, savedRow, cells)) text.move(savedRow, row);
    else text.drop(savedRow);
  }
  table.saved = text;
}

function sameCells(a: TaskRow, b: TaskRow, cells: readonly ((row: TaskRow) => string)[]): boolean {
  for (const cell of cells) if (cell(a) !== cell(b)) return false;
  return true;
}
