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
  const format: FileFormat = {
    bom: text.startsWith('\uFEFF'),
    eol: /\r\n/.test(text.slice(0, 65536)) ? '\r\n' : '\n',
  };
  let records: { record: string[]; info: { lines: number; empty_lines: number } }[];
  try {
    records = parse(text, {
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
    }) as unknown as typeof records;
  } catch (error) {
    const csvError = error as CsvError & { lines?: number };
    throw new WaveError('CSV_PARSE', `CSV parse error: ${csvError.message}`, {
      path,
      violations: [{ line: csvError.lines ?? 1, message: `CSV parse error: ${csvError.message}` }],
      cause: error,
    });
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

  const rows: TaskRow[] = [];
  const raggedRows: Violation[] = [];
  const outputColumns = new Set<string>(kOutputColumns);
  let previousEnd = records[0]!.info.lines;
  let previousEmpty = records[0]!.info.empty_lines;
  for (let r = 1; r < records.length; r++) {
    const { record, info } = records[r]!;
    // csv-parse reports the line where a record ends; it starts after the previous one
    // and after any blank lines skipped in between.
    const line = previousEnd + 1 + (info.empty_lines - previousEmpty);
    previousEnd = info.lines;
    previousEmpty = info.empty_lines;
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

/** The file's own columns, followed by any seed column it lacks (in seed order). */
function withSeedColumns(header: string[]): string[] {
  const columns = [...header];
  const present = new Set(header);
  for (const column of kTaskColumns) if (!present.has(column)) columns.push(column);
  return columns;
}

/** The file text for a table: every field quoted, output cells guarded, BOM and line ends kept. */
export function serializeTasks(table: TasksTable): string {
  const outputColumns = new Set<string>(kOutputColumns);
  const records: string[][] = [];
  for (const row of table.rows) {
    const record: string[] = [];
    for (const name of table.columns) {
      const cell = cellOf(row, name);
      record.push(outputColumns.has(name) ? guardCell(cell) : cell);
    }
    records.push(record);
  }
  return stringifyRecords(table.columns, records, table.format);
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
  const head = stringify([header], { record_delimiter: format.eol });
  const body = stringify(records, { quoted: true, quoted_empty: true, record_delimiter: format.eol });
  return `${format.bom ? '\uFEFF' : ''}${head}${body}`;
}

/** Writes tasks.csv atomically: a reader sees the old file or the new one, never half of one. */
export function writeTasksFile(path: string, table: TasksTable): void {
  writeFileAtomic(path, serializeTasks(table));
}

