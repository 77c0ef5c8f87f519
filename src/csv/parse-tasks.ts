import { readFileSync } from 'node:fs';
import { WaveError, type Violation } from '../errors.js';
import { kCr, kLf, lineCounter } from './byte-lines.js';
import { CsvSyntaxError, readCsvRecords } from './csv-records.js';
import { formatCount, isKnownColumn, kOutputColumns, kRequiredColumns, showCell } from './columns.js';
import { emptyRow, type TaskRow } from '../core/task.js';
import { unguardCell } from '../text/formula-guard.js';
import type { FileFormat, TasksTable } from './tasks-table.js';
import { decodeUtf8Text, nulByteProblem } from './utf8-text.js';
import { SavedText } from './saved-text.js';

/** Options of readTasksFile and parseTasks. */
/** Columns a file must have besides `id`, and who asks for them (a pipeline): `Missing required column: role (the brainstorm pipeline needs it)`. */
export interface RequiredColumns {
  columns: readonly string[];
  by: string;
}

export interface ReadOptions {
  /** Columns the file must have besides `id` (a pipeline's): a file without one is refused at its header. */
  required?: RequiredColumns | undefined;
  /**
   * Most task rows a file may hold. A file with more is refused with a message at the
   * first row over the limit, never cut short. (`max_rows` in session.json.)
   * @default 1_000_000
   */
  maxRows?: number | undefined;
  /**
   * Keep the file's text with the table (`saved`): the header's and each row's own, so that
   * a rewrite leaves what it does not change as it was (a save merged during a run).
   * @default false
   */
  keepText?: boolean;
}

/** Enough for any batch a person or a decomposer writes; a file past it is a mistake more often than not. */
export const kDefaultMaxRows = 1_000_000;

/**
 * Reads and parses a tasks.csv file; throws WaveError (IO, CSV_PARSE, CSV_MISSING_COLUMN,
 * INVALID_TASKS for too many rows). The file must be UTF-8 text: UTF-16, NUL bytes and
 * invalid UTF-8 are refused with the line and byte offset, never read as mojibake.
 */
export function readTasksFile(path: string, options: ReadOptions = {}): TasksTable {
  // No variable holds the bytes while the text is parsed: the garbage collector may free
  // them (the file's size again, outside the heap) before the rows are built.
  return parseTasks(decodeUtf8Text(readBytes(path), path), path, options);
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new WaveError('IO', `Cannot read ${path}: ${(error as Error).message}`, { path, cause: error });
  }
}

/** Parses tasks.csv text. `path` only names the file in errors. */
export function parseTasks(text: string, path = 'tasks.csv', options: ReadOptions = {}): TasksTable {
  const maxRows = options.maxRows ?? kDefaultMaxRows;
  if (text.includes('\0')) {
    const nul = nulByteProblem(Buffer.from(text, 'utf8'))!;
    throw new WaveError('CSV_PARSE', nul.message, { path, violations: [nul] });
  }
  const delimiter = sniffDelimiter(text);
  const lineAt = lineCounter(text);

  // Rows are built as their records come, so that no record outlives its row. Problems
  // found on the way wait for the end of the file: a parse error anywhere is reported
  // before a bad header, and every ragged row at once, as when the whole file was parsed first.
  let header: string[] | undefined;
  let headerEnd = 0;
  let headerLine = 1;
  let headerProblem: WaveError | undefined;
  let buildRow: ((fields: string[], line: number) => TaskRow) | undefined;
  let previousEnd = 0;
  let filled = 0;
  const rows: TaskRow[] = [];
  const raggedRows: Violation[] = [];
  const bomLength = text.startsWith('\uFEFF') ? 1 : 0;
  /** Where the text of the next row starts: right after the record before it (blank lines go with the row after them). */
  let textStart = bomLength;
  const rowTexts: string[] | undefined = options.keepText ? [] : undefined;
  try {
    readCsvRecords(text, delimiter, (record, end) => {
      const start = previousEnd;
      previousEnd = end;
      // The first filled record is the header; the rest are tasks. Blank lines and rows of
      // empty cells are skipped before the header as after it (a spreadsheet's blank rows).
      if (isBlankRecord(record)) return;
      if (++filled > maxRows + 1) throw new TooManyRows(start);
      const line = lineAt(start);
      if (header === undefined) {
        header = record.map((name) => name.trim());
        headerEnd = end;
        headerLine = line;
        headerProblem = headerError(header, line, path, options.required);
        if (headerProblem === undefined) buildRow = rowBuilder(header);
      } else if (record.length !== header.length) {
        raggedRows.push({ line, message: `CSV parse error: row has ${record.length} fields but the header has ${header.length}` });
      } else if (buildRow !== undefined) {
        rows.push(buildRow(record, line));
        rowTexts?.push(text.slice(textStart, end));
      }
      textStart = end;
    });
  } catch (error) {
    // The broken row starts right after the last good record, not where the reader gave
    // up (the end of the file, for an unclosed quote).
    if (error instanceof TooManyRows) {
      const line = lineAt(error.start);
      const message = `Too many rows: the file has more than ${formatCount(maxRows)} tasks (max_rows): raise max_rows in session.json to read it, or split the tasks into several sessions`;
      throw new WaveError('INVALID_TASKS', message, { path, violations: [{ line, message }] });
    }
    if (!(error instanceof CsvSyntaxError)) throw error;
    const line = lineAt(previousEnd);
    const message = `CSV parse error: ${parseErrorDetail(error, header)}`;
    throw new WaveError('CSV_PARSE', message, { path, violations: [{ line, message }], cause: error });
  }
  if (header === undefined) {
    const message = 'CSV parse error: the file is empty; it needs a header row';
    throw new WaveError('CSV_PARSE', message, { path, violations: [{ line: 1, message }] });
  }
  if (headerProblem !== undefined) throw headerProblem;

  // The header's own line end, not the first CRLF anywhere: a cell may hold a CRLF in a
  // file whose rows end with LF, and the rewrite must keep the rows' line ends.
  const format: FileFormat = {
    bom: text.startsWith('\uFEFF'),
    eol: text.charCodeAt(headerEnd - 1) === kLf && text.charCodeAt(headerEnd - 2) === kCr ? '\r\n' : '\n',
    ...(delimiter === ';' ? { delimiter } : {}),
  };
  if (raggedRows.length > 0) {
    throw new WaveError('CSV_PARSE', raggedRows[0]!.message, { path, violations: raggedRows });
  }
  const table: TasksTable = { columns: [...header], rows, format, headerLine };
  if (rowTexts !== undefined) table.saved = savedText(text, bomLength, headerEnd, header, rows, rowTexts, textStart, format.eol);
  return table;
}

/** The file's text by row (each ending with a line end: a last line without one gets the file's). */
function savedText(
  text: string,
  bomLength: number,
  headerEnd: number,
  header: readonly string[],
  rows: readonly TaskRow[],
  rowTexts: readonly string[],
  end: number,
  eol: string,
): SavedText {
  const withEol = (piece: string) => (piece.endsWith('\n') || piece.endsWith('\r') ? piece : `${piece}${eol}`);
  const saved = new SavedText(withEol(text.slice(bomLength, headerEnd)), header);
  rows.forEach((row, index) => saved.keep(row, withEol(rowTexts[index]!)));
  saved.tail = text.slice(end);
  return saved;
}

/**
 * Turns a record into a row, each column's place decided once from the header: a known
 * column is a field of the row (an output column unguarded), another one goes to `extra`.
 */
function rowBuilder(header: readonly string[]): (fields: string[], line: number) => TaskRow {
  const outputColumns = new Set<string>(kOutputColumns);
  const setters = header.map((name): ((row: TaskRow, cell: string) => void) => {
    if (!isKnownColumn(name)) return (row, cell) => void (row.extra[name] = cell);
    if (outputColumns.has(name)) return (row, cell) => void (row[name] = unguardCell(cell));
    return (row, cell) => void (row[name] = cell);
  });
  return (fields, line) => {
    const row = emptyRow();
    row.line = line;
    for (let c = 0; c < setters.length; c++) setters[c]!(row, fields[c]!);
    return row;
  };
}

/**
 * WaveError CSV_MISSING_COLUMN, every problem at the header's line, for a duplicate
 * column name (each named once) or a missing required column; undefined for a good header.
 */
function headerError(header: readonly string[], line: number, path: string, required: RequiredColumns | undefined): WaveError | undefined {
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
  violations.push(...missingColumns(seen, required, line));
  if (violations.length === 0) return undefined;
  return new WaveError('CSV_MISSING_COLUMN', violations[0]!.message, { path, violations });
}

/** The columns `required` names that `present` lacks, each a violation at the header's line. */
export function missingColumns(present: ReadonlySet<string>, required: RequiredColumns | undefined, line: number): Violation[] {
  return (required?.columns ?? [])
    .filter((name) => !kRequiredColumns.includes(name as never) && !present.has(name))
    .map((name) => ({ line, message: `Missing required column: ${name} (${required!.by} needs it)` }));
}

/** Thrown from the record callback to stop reading at the row limit; `start` is where the row over it begins. */
class TooManyRows extends Error {
  constructor(readonly start: number) {
    super('too many rows');
  }
}

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
function parseErrorDetail(error: CsvSyntaxError, header: readonly string[] | undefined): string {
  const index = error.column;
  const field =
    header === undefined
      ? `field ${index + 1} of the header`
      : `field ${index + 1} (${header[index]?.trim() || 'beyond the header'})`;
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `unclosed quote in ${field}: the quoted text runs to the end of the file`;
    case 'INVALID_OPENING_QUOTE':
      return `quote inside the unquoted ${field}: quote the whole field and double the quotes inside it`;
    case 'CSV_INVALID_CLOSING_QUOTE': {
      const what = error.found === undefined ? 'text' : JSON.stringify(error.found);
      return `unexpected ${what} after the closing quote of ${field}: double the quotes inside a quoted field`;
    }
  }
}
