import { readFileSync } from 'node:fs';
import { parse, type CsvError } from 'csv-parse/sync';
import { WaveError, type Violation } from '../errors.js';
import { kCr, kLf, lineCounter } from './byte-lines.js';
import { formatCount, isKnownColumn, kOutputColumns, kRequiredColumns, showCell } from './columns.js';
import { kTaskColumns, emptyRow, type TaskRow } from '../core/task.js';
import { unguardCell } from './formula-guard.js';
import type { FileFormat, TasksTable } from './tasks-table.js';
import { decodeUtf8Text, nulByteProblem } from './utf8-text.js';

/** Options of readTasksFile and parseTasks. */
export interface ReadOptions {
  /**
   * Most task rows a file may hold. A file with more is refused with a message at the
   * first row over the limit, never cut short. (`max_rows` in session.json.)
   * @default 1_000_000
   */
  maxRows?: number | undefined;
}

/** Enough for any batch a person or a decomposer writes; a file past it is a mistake more often than not. */
export const kDefaultMaxRows = 1_000_000;

/**
 * Reads and parses a tasks.csv file; throws WaveError (IO, CSV_PARSE, CSV_MISSING_COLUMN,
 * INVALID_TASKS for too many rows). The file must be UTF-8 text: UTF-16, NUL bytes and
 * invalid UTF-8 are refused with the line and byte offset, never read as mojibake.
 */
export function readTasksFile(path: string, options: ReadOptions = {}): TasksTable {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new WaveError('IO', `Cannot read ${path}: ${(error as Error).message}`, { path, cause: error });
  }
  return parseTasks(decodeUtf8Text(bytes, path), path, options);
}

/** Parses tasks.csv text. `path` only names the file in errors. */
export function parseTasks(text: string, path = 'tasks.csv', options: ReadOptions = {}): TasksTable {
  const maxRows = options.maxRows ?? kDefaultMaxRows;
  const bytes = Buffer.from(text, 'utf8');
  const nul = nulByteProblem(bytes);
  if (nul !== undefined) throw new WaveError('CSV_PARSE', nul.message, { path, violations: [nul] });
  const delimiter = sniffDelimiter(text);

  // Records are collected as they come, so that a parse error still knows where the last
  // good record ended: the broken row starts right after it, not where csv-parse gave up
  // (the end of the file, for an unclosed quote).
  const records: { record: string[]; info: { bytes: number } }[] = [];
  let filled = 0;
  try {
    parse(text, {
      bom: true,
      delimiter,
      // Every line end, whatever the first one is: a file whose rows were added by another
      // editor mixes them, and csv-parse's guess from the first one would leave CRs in cells.
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      skip_empty_lines: true,
      on_record: (record, context) => {
        // The first filled record is the header; the rest are tasks.
        if (!isBlankRecord(record) && ++filled > maxRows + 1) throw new TooManyRows();
        records.push({ record, info: { bytes: context.bytes } });
        return null;
      },
    });
  } catch (error) {
    const line = lineCounter(bytes)(records[records.length - 1]?.info.bytes ?? 0);
    if (error instanceof TooManyRows) {
      const message = `Too many rows: the file has more than ${formatCount(maxRows)} tasks (max_rows): raise max_rows in session.json to read it, or split the tasks into several sessions`;
      throw new WaveError('INVALID_TASKS', message, { path, violations: [{ line, message }] });
    }
    const header = records.find(({ record }) => !isBlankRecord(record))?.record;
    const message = `CSV parse error: ${parseErrorDetail(error as CsvError, header)}`;
    throw new WaveError('CSV_PARSE', message, { path, violations: [{ line, message }], cause: error });
  }
  // Blank lines and rows of empty cells before the header are skipped, like those after it.
  const first = records.findIndex(({ record }) => !isBlankRecord(record));
  if (first === -1) {
    const message = 'CSV parse error: the file is empty; it needs a header row';
    throw new WaveError('CSV_PARSE', message, { path, violations: [{ line: 1, message }] });
  }

  const lineAt = lineCounter(bytes);
  const headerLine = lineAt(first === 0 ? 0 : records[first - 1]!.info.bytes);
  const header = records[first]!.record.map((name) => name.trim());
  checkHeader(header, headerLine, path);

  // The header's own line end, not the first CRLF anywhere: a cell may hold a CRLF in a
  // file whose rows end with LF, and the rewrite must keep the rows' line ends.
  const headerEnd = records[first]!.info.bytes;
  const format: FileFormat = {
    bom: text.startsWith('\uFEFF'),
    eol: bytes[headerEnd - 1] === kLf && bytes[headerEnd - 2] === kCr ? '\r\n' : '\n',
    ...(delimiter === ';' ? { delimiter } : {}),
  };
  const rows: TaskRow[] = [];
  const raggedRows: Violation[] = [];
  const outputColumns = new Set<string>(kOutputColumns);
  for (let r = first + 1; r < records.length; r++) {
    const { record } = records[r]!;
    const line = lineAt(records[r - 1]!.info.bytes);
    if (isBlankRecord(record)) continue; // a spreadsheet's blank trailing row
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
 * Throws WaveError CSV_MISSING_COLUMN, every problem at the header's line, for a duplicate
 * column name (each named once) or a missing required column.
 */
function checkHeader(header: readonly string[], line: number, path: string): void {
  const violations: Violation[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) {
      const message =
        name === ''
          ? 'Duplicate column: (no name): name every column, or delete the empty ones'
          : `Duplicate column: ${showCell(name)}`;
      if (!violations.some((v) => v.message === message)) violations.push({ line, message });
    }
    seen.add(name);
  }
  for (const name of kRequiredColumns) {
    if (!seen.has(name)) violations.push({ line, message: `Missing required column: ${name}` });
  }
  if (violations.length > 0) {
    throw new WaveError('CSV_MISSING_COLUMN', violations[0]!.message, { path, violations });
  }
}

/** Thrown from csv-parse's record callback to stop reading at the row limit. */
class TooManyRows extends Error {}

/** A record of empty cells only: what a spreadsheet saves for a blank row. */
function isBlankRecord(record: readonly string[]): boolean {
  return record.every((cell) => cell.trim() === '');
}

/**
 * `;` when the file is what a spreadsheet in a European locale saves as "CSV": its header
 * line names more csv-wave columns when split at `;` than at `,` (a name may hold the
 * other character). Anything else is read with commas, and a bad header is reported as such.
 */
function sniffDelimiter(text: string): ',' | ';' {
  let start = text.startsWith('\uFEFF') ? 1 : 0;
  while (text[start] === '\r' || text[start] === '\n') start++;
  const end = text.indexOf('\n', start);
  const line = text.slice(start, end === -1 ? text.length : end);
  if (!line.includes(';')) return ',';
  const known = (delimiter: string) =>
    line.split(delimiter).filter((name) => isKnownColumn(name.trim().replace(/^"(.*)"$/, '$1'))).length;
  return known(';') > known(',') ? ';' : ',';
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

/** The file's own columns, followed by any seed column it lacks (in seed order). */
function withSeedColumns(header: string[]): string[] {
  const columns = [...header];
  const present = new Set(header);
  for (const column of kTaskColumns) if (!present.has(column)) columns.push(column);
  return columns;
}
