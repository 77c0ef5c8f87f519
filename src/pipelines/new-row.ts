import { emptyRow, type TaskRow, type KnownColumn } from '../core/task.js';

/** A pending task row with the given input cells; every other cell empty. */
export function newRow(cells: Partial<Record<KnownColumn, string>>): TaskRow {
  const row = emptyRow();
  Object.assign(row, { gc_round: '0', exec_mode: 'csv-wave', status: 'pending' }, cells);
  return row;
}
