import type { TaskRow } from '../core/task.js';

/**
 * The cells a run changes in a row once it is in the table: its outcome, its wave, and its
 * rewiring by an interactive task. A row whose cells are still the ones it was saved with
 * is written back as it was saved.
 */
const kRunCells = ['status', 'findings', 'error', 'gc_signal', 'severity_summary', 'route', 'wave', 'deps', 'context_from'] as const;

/**
 * tasks.csv's text as a person saved it during a run, kept so that a rewrite changes only
 * what the run changes: the header and every row the run has not changed since are written
 * back byte for byte, with the quoting the person's program gave them. Holds the saved text
 * (its rows are slices of it) until the next save replaces it.
 */
export class SavedText {
  /** The header's line, and any blank lines before it (after the BOM, which the format says). */
  readonly header: string;
  /** The header's names, as read: the rows' text fits only a table with these columns. */
  readonly columns: readonly string[];
  /** Blank lines after the last row. */
  tail = '';
  readonly #rows = new Map<TaskRow, { text: string; cells: string[] }>();

  constructor(header: string, columns: readonly string[]) {
    this.header = header;
    this.columns = columns;
  }

  /** Keeps `text` (ending with its line end) as the row's, for as long as the run's cells of the row stay as they are now. */
  keep(row: TaskRow, text: string): void {
    this.#rows.set(row, { text, cells: kRunCells.map((column) => row[column]) });
  }

  /** The text kept for `from`, kept now for `to` (the run's own row object that reads the same), if any. */
  move(from: TaskRow, to: TaskRow): void {
    const kept = this.#rows.get(from);
    this.#rows.delete(from);
    if (kept !== undefined) this.keep(to, kept.text);
  }

  /** Forgets a row's text: it will be written from its cells. */
  drop(row: TaskRow): void {
    this.#rows.delete(row);
  }

  /** Whether the header's text fits a table with these columns. */
  fits(columns: readonly string[]): boolean {
    return columns.length === this.columns.length && columns.every((name, index) => name === this.columns[index]);
  }

  /** The row's text as saved, while the run has not changed it; undefined once it has (then it is let go). */
  textOf(row: TaskRow): string | undefined {
    const kept = this.#rows.get(row);
    if (kept === undefined) return undefined;
    for (let index = 0; index < kRunCells.length; index++) {
      if (row[kRunCells[index]!] !== kept.cells[index]) {
        this.#rows.delete(row);
        return undefined;
      }
    }
    return kept.text;
  }
}
