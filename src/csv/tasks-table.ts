import type { TaskRow } from '../core/task.js';
import { isKnownColumn } from './columns.js';
import type { SavedText } from './saved-text.js';

/** How the file was laid out, so that a rewrite keeps it as the reader found it. */
export interface FileFormat {
  bom: boolean;
  eol: '\n' | '\r\n';
  /**
   * `;` for a file saved by a spreadsheet set to a European locale, which puts `;`
   * between fields; it is read and written back that way. Absent: commas.
   */
  delimiter?: ';';
}

/** tasks.csv in memory: what parseTasks returns and serializeTasks writes back. */
export interface TasksTable {
  /** Column names in file order: known and extra, then those the pipeline writes (pipelines/pipeline-columns.ts). */
  columns: string[];
  rows: TaskRow[];
  format: FileFormat;
  /** The file line of the header (blank lines may come before it). @default 1 */
  headerLine?: number;
  /**
   * The text of a save a run merged (session/edits/): what the run has not changed since is
   * written back as the person saved it. Absent otherwise: every row is written from its cells.
   */
  saved?: SavedText;
}

/** Every cell of a row by column name: the known columns and the person's own. */
export function rowCells(row: TaskRow): Record<string, string> {
  const cells: Record<string, string> = { ...row.extra };
  for (const [name, value] of Object.entries(row)) if (typeof value === 'string') cells[name] = value;
  return cells;
}

/** A row's cell by column name, known or extra, as the task produced it. */
export function cellOf(row: TaskRow, column: string): string {
  return isKnownColumn(column) ? row[column] : (row.extra[column] ?? '');
}

/**
 * cellOf for one column, with the known-or-extra question answered once: for loops over
 * every row (validating, writing the file), where asking it per cell showed in profiles.
 */
export function cellReader(column: string): (row: TaskRow) => string {
  if (isKnownColumn(column)) return (row) => row[column];
  return (row) => row.extra[column] ?? '';
}
