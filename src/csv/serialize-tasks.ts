import { stringify } from 'csv-stringify/sync';
import { writeFileAtomic } from '../files/atomic-write.js';
import { kOutputColumns } from './columns.js';
import { guardCell } from '../text/formula-guard.js';
import { cellReader, type FileFormat, type TasksTable } from './tasks-table.js';
import type { TaskRow } from '../core/task.js';

const kDefaultFormat: FileFormat = { bom: false, eol: '\n' };

/** The file text for a table: every field quoted, output cells guarded, BOM and line ends kept. */
export function serializeTasks(table: TasksTable): string {
  return [...serializeTasksInChunks(table)].join('');
}

/** Rows per piece of text: big enough that a write call carries ~0.5 MB, small enough not to hold the file twice. */
const kRowsPerChunk = 4096;

/**
 * The file text in pieces, so that a big file is written without holding all of it (or a
 * copy of every cell) in memory at once. Each row is written straight from the table: no
 * copy of its cells into an intermediate record.
 */
export function* serializeTasksInChunks(table: TasksTable): Generator<string> {
  // A save merged during the run: what the run has not changed is written as it was saved.
  const saved = table.saved?.fits(table.columns) ? table.saved : undefined;
  yield saved ? `${table.format.bom ? '\uFEFF' : ''}${saved.header}` : stringifyHeader(table.columns, table.format);
  const cells = table.columns.map(guardedCellReader);
  const delimiter = table.format.delimiter ?? ',';
  const { eol } = table.format;
  const { rows } = table;
  for (let start = 0; start < rows.length; start += kRowsPerChunk) {
    let chunk = '';
    const end = Math.min(rows.length, start + kRowsPerChunk);
    for (let r = start; r < end; r++) {
      const row = rows[r]!;
      const text = saved?.textOf(row);
      if (text !== undefined) {
        chunk += text;
        continue;
      }
      let line = '';
      for (let c = 0; c < cells.length; c++) {
        if (c > 0) line += delimiter;
        line += quoteField(cells[c]!(row));
      }
      chunk += line + eol;
    }
    yield chunk;
  }
  if (saved && saved.tail !== '') yield saved.tail;
}

/** cellReader, with output columns guarded against formula injection. */
function guardedCellReader(column: string): (row: TaskRow) => string {
  const read = cellReader(column);
  return (kOutputColumns as readonly string[]).includes(column) ? (row) => guardCell(read(row)) : read;
}

/** A data field as csv-stringify writes it with `quoted: true`: always in double quotes, a quote inside doubled. */
function quoteField(cell: string): string {
  return cell.includes('"') ? `"${cell.replaceAll('"', '""')}"` : `"${cell}"`;
}

/**
 * CSV text with every data field quoted. The header is quoted only where a name needs it,
 * as in the seed's example, so that a file in the seed's layout is rewritten byte for byte.
 */
export function stringifyRecords(header: readonly string[], records: string[][], format: FileFormat = kDefaultFormat): string {
  const delimiter = format.delimiter ?? ',';
  let body = '';
  for (const record of records) body += record.map(quoteField).join(delimiter) + format.eol;
  return stringifyHeader(header, format) + body;
}

function stringifyHeader(header: readonly string[], format: FileFormat): string {
  const delimiter = format.delimiter ?? ',';
  return `${format.bom ? '\uFEFF' : ''}${stringify([header], { delimiter, record_delimiter: format.eol })}`;
}

/** Writes tasks.csv atomically: a reader sees the old file or the new one, never half of one. */
export function writeTasksFile(path: string, table: TasksTable): void {
  writeFileAtomic(path, serializeTasksInChunks(table));
}
