import { constants as bufferConstants, isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { parse, type CsvError } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { WaveError, type Violation } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { guardCell, unguardCell } from './formula-guard.js';
import {
  formatCount,
  isKnownColumn,
  kOutputColumns,
  kRequiredColumns,
  kTaskColumns,
  showCell,
  type KnownColumn,
} from './columns.js';

/** Longest string V8 can hold: a bigger file cannot be read as one text. */
const kStringMaxLength = bufferConstants.MAX_STRING_LENGTH;

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
  /**
   * `;` for a file saved by a spreadsheet set to a European locale, which puts `;`
   * between fields; it is read and written back that way. Absent: commas.
   */
  delimiter?: ';';
}

export interface TasksTable {
  /** Column names in file order: known and extra, with missing seed columns appended. */
  columns: string[];
  rows: TaskRow[];
  format: FileFormat;
}

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

const kDefaultFormat: FileFormat = { bom: false, eol: '\n' };

export function emptyRow(): TaskRow {
  const row = { line: 0, extra: {} } as TaskRow;
  for (const column of kTaskColumns) row[column] = '';
  row.priority = '';
  return row;
}

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

/**
 * The text of a file that must be UTF-8. Throws WaveError CSV_PARSE, with the line, for a
 * UTF-16 file, a NUL byte, invalid UTF-8 (a Latin-1 or Windows-1252 file is that, and is
 * said to be) or a file too big to hold as one string.
 */
export function decodeUtf8Text(bytes: Buffer, path = 'tasks.csv'): string {
  const problem = textProblem(bytes) ?? sizeProblem(bytes);
  if (problem !== undefined) {
    throw new WaveError('CSV_PARSE', problem.message, { path, violations: [problem] });
  }
  return bytes.toString('utf8');
}

/** The first reason these bytes are not UTF-8 text, at its line; undefined when they are. */
export function textProblem(bytes: Uint8Array): Violation | undefined {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    const mark = `0x${hexByte(bytes[0])} 0x${hexByte(bytes[1]!)}`;
    return { line: 1, message: `The file is UTF-16 (it starts with the bytes ${mark}): save it as UTF-8 (in a spreadsheet: "CSV UTF-8")` };
  }
  const nul = bytes.indexOf(0);
  if (nul !== -1) return { line: lineOfByte(bytes, nul), message: nulMessage(nul) };
  if (isUtf8(bytes)) return undefined;
  const at = firstInvalidUtf8(bytes);
  const byte = bytes[at]!;
  // A Latin-1 or Windows-1252 file is plain ASCII up to its first accented letter; a UTF-8
  // file with one bad byte usually has good multi-byte letters before it.
  const asWindows1252 = bytes.subarray(0, at).every((b) => b < 0x80) ? windows1252Char(byte) : undefined;
  const what =
    asWindows1252 === undefined
      ? `0x${hexByte(byte)}`
      : `0x${hexByte(byte)}, ${quotedChar(asWindows1252)} in Latin-1/Windows-1252`;
  return {
    line: lineOfByte(bytes, at),
    message: `Invalid UTF-8 at byte ${at} (${what}): save the file as UTF-8 (in a spreadsheet: "CSV UTF-8")`,
  };
}

function nulMessage(offset: number): string {
  return `NUL byte at byte ${offset}: a text file holds none (UTF-16 and binary files do); save the file as UTF-8 (in a spreadsheet: "CSV UTF-8")`;
}

function sizeProblem(bytes: Buffer): Violation | undefined {
  if (bytes.length <= kStringMaxLength) return undefined;
  return {
    line: 1,
    message: `The file is ${formatCount(bytes.length)} bytes, more than csv-wave can read (${formatCount(kStringMaxLength)}): split the tasks into several sessions`,
  };
}

/** Parses tasks.csv text. `path` only names the file in errors. */
export function parseTasks(text: string, path = 'tasks.csv', options: ReadOptions = {}): TasksTable {
  const maxRows = options.maxRows ?? kDefaultMaxRows;
  const bytes = Buffer.from(text, 'utf8');
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    const violation = { line: lineOfByte(bytes, nul), message: nulMessage(nul) };
    throw new WaveError('CSV_PARSE', violation.message, { path, violations: [violation] });
  }
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
  const headerViolations: Violation[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) {
      const message =
        name === ''
          ? 'Duplicate column: (no name): name every column, or delete the empty ones'
          : `Duplicate column: ${showCell(name)}`;
      if (!headerViolations.some((v) => v.message === message)) headerViolations.push({ line: headerLine, message });
    }
    seen.add(name);
  }
  for (const name of kRequiredColumns) {
    if (!seen.has(name)) headerViolations.push({ line: headerLine, message: `Missing required column: ${name}` });
  }
  if (headerViolations.length > 0) {
    throw new WaveError('CSV_MISSING_COLUMN', headerViolations[0]!.message, { path, violations: headerViolations });
  }

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

/** The line of the byte at `offset` (1-based): line ends before it, LF, CRLF or a lone CR. */
function lineOfByte(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = 0; at < offset; at++) {
    const byte = bytes[at];
    if (byte === kLf || (byte === kCr && bytes[at + 1] !== kLf)) line++;
  }
  return line;
}

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence (Unicode 15, table 3-7:
 * no overlong forms, no surrogates, nothing past U+10FFFF), or -1.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  const continuation = (at: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at];
    return byte !== undefined && byte >= low && byte <= high;
  };
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at]!;
    let size: number;
    if (lead < 0x80) size = 1;
    else if (lead >= 0xc2 && lead <= 0xdf) size = continuation(at + 1) ? 2 : 0;
    else if (lead >= 0xe0 && lead <= 0xef) {
      const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
      size = continuation(at + 1, low, high) && continuation(at + 2) ? 3 : 0;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      const [low, high] = lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
      size = continuation(at + 1, low, high) && continuation(at + 2) && continuation(at + 3) ? 4 : 0;
    } else size = 0;
    if (size === 0) return at;
    at += size;
  }
  return -1;
}

/** Windows-1252's letters for 0x80-0x9F (Latin-1 has controls there); `\0` where it has none. */
const kWindows1252High = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ';

/** The character a byte stands for in Windows-1252 (a superset of Latin-1's letters), if any. */
function windows1252Char(byte: number): string | undefined {
  if (byte < 0x80) return undefined;
  if (byte >= 0xa0) return String.fromCharCode(byte);
  const char = kWindows1252High[byte - 0x80]!;
  return char === '\0' ? undefined : char;
}

function quotedChar(char: string): string {
  const shown = showCell(char);
  return shown.startsWith('"') ? shown : `"${shown}"`;
}

function hexByte(byte: number): string {
  return byte.toString(16).toUpperCase().padStart(2, '0');
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
  const delimiter = format.delimiter ?? ',';
  return `${format.bom ? '\uFEFF' : ''}${stringify([header], { delimiter, record_delimiter: format.eol })}`;
}

function stringifyBody(records: string[][], format: FileFormat): string {
  const delimiter = format.delimiter ?? ',';
  return stringify(records, { delimiter, quoted: true, quoted_empty: true, record_delimiter: format.eol });
}

/** Writes tasks.csv atomically: a reader sees the old file or the new one, never half of one. */
export function writeTasksFile(path: string, table: TasksTable): void {
  writeFileAtomic(path, serializeTasksInChunks(table));
}

