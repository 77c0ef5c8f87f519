import { stringify } from 'csv-stringify/sync';
import { writeFileAtomic } from './atomic-write.js';
import { kOutputColumns } from './columns.js';
import { guardCell } from './formula-guard.js';
import { cellOf, type FileFormat, type TasksTable } from './tasks-table.js';

const kDefaultFormat: FileFormat = { bom: false, eol: '\n' };

/** The file text for a table: every field quoted, output cells guarded, BOM and line ends kept. */
export function serializeTasks(table: TasksTable): string {
  return [...serializeTasksInChunks(table)].join('');
}

/** Rows stringified at once: enough to amortise csv-stringify's set-up, small enough to stay in cache. */
const kRowsPerChunk = 4096;

/**
 * The file text in pieces, so that a big file is written without holding all of it (or a
 * copy of every cell) in memory at once.
 */
export function* serializeTasksInChunks(table: TasksTable): Generator<string> {
  const outputColumns = new Set<string>(kOutputColumns);
  yield stringifyHeader(table.columns, table.format);
  for (let start = 0; start < table.rows.length; start += kRowsPerChunk) {
    const records: string[][] = [];
    for (const row of table.rows.slice(start, start + kRowsPerChunk)) {
      const record: string[] = [];
      for (const name of table.columns) {
        const cell = cellOf(row, name);
        record.push(outputColumns.has(name) ? guardCell(cell) : cell);
      }
      records.push(record);
    }
    yield stringifyBody(records, table.format);
  }
}

/**
 * CSV text with every data field quoted. The header is quoted only where a name needs it,
 * as in the seed's example, so that a file in the seed's layout is rewritten byte for byte.
 */
export function stringifyRecords(header: readonly string[], records: string[][], format: FileFormat = kDefaultFormat): string {
  return stringifyHeader(header, format) + stringifyBody(records, format);
}

function stringifyHeader(header: readonly string[], format: FileFormat): string {
  const delimiter = format.delimiter ?? ',';
  return `${format.bom ? '\uFEFF' : ''}${stringify([header], { delimiter, record_delimiter: format.eol })}`;
}

/**
 * Every field quoted, a quote inside doubled: what csv-stringify writes with `quoted` and
 * `quoted_empty` (a test compares the two), built here without its per-record work, which
 * was most of a checkpoint's time on the engine's main thread.
 */
export function stringifyBody(records: readonly (readonly string[])[], format: FileFormat): string {
  const separator = `"${format.delimiter ?? ','}"`;
  let text = '';
  for (const record of records) {
    text += `"${record.map(quoteInner).join(separator)}"${format.eol}`;
  }
  return text;
}

function quoteInner(cell: string): string {
  return cell.includes('"') ? cell.replaceAll('"', '""') : cell;
}

/** Writes tasks.csv atomically: a reader sees the old file or the new one, never half of one. */
export function writeTasksFile(path: string, table: TasksTable): void {
  writeFileAtomic(path, serializeTasksInChunks(table));
}
