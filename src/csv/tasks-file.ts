import { readFileSync } from 'node:fs';
import { parse, type CsvError } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { WaveError, type Violation } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { guardCell, unguardCell } from './formula-guard.js';
import {
  isKnownColumn,
  kOutputColumns,
  kRequiredColumns,
  kTaskColumns,
  type KnownColumn,
} from './columns.js';

/** One task: every known column as a string (empty when absent), plus the person's own columns. */
export type TaskRow = Record<KnownColumn, string> & {
  /** File line where the row starts (1-based; the header is line 1). 0 for rows added by the engine. */
  line: number;
  /** Columns csv-wave does not know, kept verbatim and written back in place. */
  extra: Record<string, string>;
};

/** How the file was laid out, so that a rewrite keeps it as the reader found it. */
export interface FileFormat {
  bom: boolean;
  eol: '\n' | '\r\n';
}

export interface TasksTable {
  /** Column names in file order: known and extra, with missing seed columns appended. */
  columns: string[];
  rows: TaskRow[];
  format: FileFormat;
}

const kDefaultFormat: FileFormat = { bom: false, eol: '\n' };

export function emptyRow(): TaskRow {
  const row = { line: 0, extra: {} } as TaskRow;
  for (const column of kTaskColumns) row[column] = '';
  row.priority = '';
  return row;
}

/** Reads and parses a tasks.csv file; throws WaveError (IO, CSV_PARSE, CSV_MISSING_COLUMN). */
export function readTasksFile(path: string): TasksTable {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new WaveError('IO', `Cannot read ${path}: ${(error as Error).message}`, { path, cause: error });
  }
  return parseTasks(text, path);
}

/** Parses tasks.csv text. `path` only names the file in errors. */
export function parseTasks(text: string, path = 'tasks.csv'): TasksTable {
  // Records are collected as they come, so that a parse error still knows where the last
  // good record ended: the broken row starts right after it, not where csv-parse gave up
  // (the end of the file, for an unclosed quote).
  const records: { record: string[]; info: { bytes: number } }[] = [];
  try {
    parse(text, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      on_record: (record, context) => {
        records.push({ record, info: { bytes: context.bytes } });
        return null;
      },
    });
  } catch (error) {
    const line = lineCounter(Buffer.from(text, 'utf8'))(records[records.length - 1]?.info.bytes ?? 0);
    const message = `CSV parse error: ${parseErrorDetail(error as CsvError, records[0]?.record)}`;
    throw new WaveError('CSV_PARSE', message, { path, violations: [{ line, message }], cause: error });
  }
  if (records.length === 0) {
    throw new WaveError('CSV_PARSE', 'CSV parse error: the file is empty; it needs a header row', {
      path,
      violations: [{ line: 1, message: 'CSV parse error: the file is empty; it needs a header row' }],
    });
  }

  const header = records[0]!.record.map((name) => name.trim());
  const headerViolations: Violation[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) headerViolations.push({ line: 1, message: `Duplicate column: ${name}` });
    seen.add(name);
  }
  for (const name of kRequiredColumns) {
    if (!seen.has(name)) headerViolations.push({ line: 1, message: `Missing required column: ${name}` });
  }
  if (headerViolations.length > 0) {
    throw new WaveError('CSV_MISSING_COLUMN', headerViolations[0]!.message, { path, violations: headerViolations });
  }

  const bytes = Buffer.from(text, 'utf8');
  // The header's own line end, not the first CRLF anywhere: a cell may hold a CRLF in a
  // file whose rows end with LF, and the rewrite must keep the rows' line ends.
  const headerEnd = records[0]!.info.bytes;
  const format: FileFormat = {
    bom: text.startsWith('\uFEFF'),
    eol: bytes[headerEnd - 1] === kLf && bytes[headerEnd - 2] === kCr ? '\r\n' : '\n',
  };
  const lineAt = lineCounter(bytes);
  const rows: TaskRow[] = [];
  const raggedRows: Violation[] = [];
  const outputColumns = new Set<string>(kOutputColumns);
  for (let r = 1; r < records.length; r++) {
    const { record } = records[r]!;
    const line = lineAt(records[r - 1]!.info.bytes);
    if (record.every((cell) => cell === '')) continue; // a spreadsheet's blank trailing row
    if (record.length !== header.length) {
      raggedRows.push({
        line,
        message: `CSV parse error: row has ${record.length} fields but the header has ${header.length}`,
      });
      continue;
    }
    const row = emptyRow();
    row.line = line;
    for (let c = 0; c < header.length; c++) {
      const name = header[c]!;
      const cell = record[c]!;
      if (isKnownColumn(name)) row[name] = outputColumns.has(name) ? unguardCell(cell) : cell;
      else row.extra[name] = cell;
    }
    rows.push(row);
  }
  if (raggedRows.length > 0) {
    throw new WaveError('CSV_PARSE', raggedRows[0]!.message, { path, violations: raggedRows });
  }
  return { columns: withSeedColumns(header), rows, format };
}

/**
 * csv-parse's message for a malformed record, said in the terms of the file: the field by
 * number and column name, and no line number (the caller gives the line where the row
 * starts; csv-parse counts where it stopped).
 */
function parseErrorDetail(error: CsvError, header: readonly string[] | undefined): string {
  const index = typeof error['column'] === 'number' ? error['column'] : undefined;
  const field =
    index === undefined
      ? 'a field'
      : header === undefined
        ? `field ${index + 1} of the header`
        : `field ${index + 1} (${header[index]?.trim() || 'beyond the header'})`;
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `unclosed quote in ${field}: the quoted text runs to the end of the file`;
    case 'INVALID_OPENING_QUOTE':
      return `quote inside the unquoted ${field}: quote the whole field and double the quotes inside it`;
    case 'CSV_INVALID_CLOSING_QUOTE': {
      const found = /got "(.*?)" at line/.exec(error.message)?.[1];
      const what = found === undefined ? 'text' : JSON.stringify(found);
      return `unexpected ${what} after the closing quote of ${field}: double the quotes inside a quoted field`;
    }
    default:
      return error.message;
  }
}

const kLf = 0x0a;
const kCr = 0x0d;

/**
 * The line where a record starts, given the byte offset where the previous record ended
 * (csv-parse's info.bytes): skip the blank lines in between, then count the line ends
 * before. csv-parse's own info.lines counts a CRLF inside a quoted cell as two lines.
 * Offsets must grow from call to call, so that a whole file costs one pass.
 */
function lineCounter(bytes: Buffer): (previousEnd: number) => number {
  let at = 0;
  let line = 1;
  return (previousEnd) => {
    let start = previousEnd;
    while (start < bytes.length && (bytes[start] === kLf || bytes[start] === kCr)) start++;
    for (; at < start; at++) {
      const byte = bytes[at];
      if (byte === kLf || (byte === kCr && bytes[at + 1] !== kLf)) line++;
    }
    return line;
  };
}

/** The file's own columns, followed by any seed column it lacks (in seed order). */
function withSeedColumns(header: string[]): string[] {
  const columns = [...header];
  const present = new Set(header);
  for (const column of kTaskColumns) if (!present.has(column)) columns.push(column);
  return columns;
}

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
 * CSV text with every data field quoted. The header is quoted only where a name needs it,
 * as in the seed's example, so that a file in the seed's layout is rewritten byte for byte.
 */
export function stringifyRecords(header: readonly string[], records: string[][], format: FileFormat = kDefaultFormat): string {
  return stringifyHeader(header, format) + stringifyBody(records, format);
}

function stringifyHeader(header: readonly string[], format: FileFormat): string {
  return `${format.bom ? '\uFEFF' : ''}${stringify([header], { record_delimiter: format.eol })}`;
}

function stringifyBody(records: string[][], format: FileFormat): string {
  return stringify(records, { quoted: true, quoted_empty: true, record_delimiter: format.eol });
}

/** Writes tasks.csv atomically: a reader sees the old file or the new one, never half of one. */
export function writeTasksFile(path: string, table: TasksTable): void {
  writeFileAtomic(path, serializeTasksInChunks(table));
}

