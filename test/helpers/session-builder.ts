import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';

/**
 * The one builder of session folders for the tests: tasks.csv (rows or the file's own
 * text), session.json, any other file, the bullmq session id. Every test that needs a session
 * on disk makes it here, so a change of the folder's layout is made once.
 */

/** A row of a hand-made tasks.csv: column name → cell. `id`, `description` and `role` are needed. */
export type RowInput = Record<string, string>;

/** How tasks.csv is spelled when it is made from rows. */
export interface CsvSpelling {
  /** Start the file with a UTF-8 byte order mark, as spreadsheet programs save one. */
  bom?: boolean;
  /** End lines with `\r\n` rather than `\n`. */
  crlf?: boolean;
}

/** What buildSession writes beside tasks.csv. */
export interface SessionOptions extends CsvSpelling {
  /**
   * session.json: an object (written as JSON), the file's own text or bytes, or null for none
   * (the pipeline is then inferred from the roles). Default `{"pipeline":"generic"}`: any role.
   */
  session?: Record<string, unknown> | string | Buffer | null;
  /** Other files, by path inside the folder (parents made); written last, so they win over the above. */
  files?: Record<string, string | Buffer>;
  /** The bullmq session id (`.csv-wave/session-id`), so that workers can be started before the run. */
  sessionId?: string;
  /** Build in this folder (made if missing) rather than in a fresh temporary one. */
  dir?: string;
  /** The temporary folder's name prefix, for a test whose folders must be told apart. */
  prefix?: string;
}

const kDefaultColumns = ['id', 'title', 'description', 'role', 'deps', 'context_from', 'exec_mode'];
const kGenericSession = '{"pipeline":"generic"}';

/** tasks.csv text for the rows: the usual input columns, then any other column a row names. */
export function tasksCsv(rows: readonly RowInput[], spelling: CsvSpelling = {}): string {
  const columns = [...kDefaultColumns];
  for (const row of rows) for (const name of Object.keys(row)) if (!columns.includes(name)) columns.push(name);
  const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
  const lines = [columns.join(','), ...rows.map((row) => columns.map((name) => quote(row[name] ?? '')).join(','))];
  const eol = spelling.crlf === true ? '\r\n' : '\n';
  return `${spelling.bom === true ? '\uFEFF' : ''}${lines.join(eol)}${eol}`;
}

/**
 * A session folder holding these tasks: rows (made into tasks.csv by tasksCsv), the
 * file's text or bytes as they are (a bad row, a BOM, CRLF: whatever the test needs), or
 * null for no tasks.csv (an executor's test needs only session.json; a test of another tasks
 * file names it in `files`). Returns the folder's path.
 */
export function buildSession(tasks: readonly RowInput[] | string | Buffer | null, options: SessionOptions = {}): string {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), options.prefix ?? 'csv-wave-test-'));
  mkdirSync(dir, { recursive: true });
  if (tasks !== null) writeFileSync(join(dir, 'tasks.csv'), typeof tasks === 'string' || Buffer.isBuffer(tasks) ? tasks : tasksCsv(tasks, options));
  const session = options.session === undefined ? kGenericSession : options.session;
  if (session !== null) writeFileSync(join(dir, 'session.json'), typeof session === 'string' || Buffer.isBuffer(session) ? session : JSON.stringify(session));
  if (options.sessionId !== undefined) writeFile(dir, '.csv-wave/session-id', `${options.sessionId}\n`);
  for (const [name, content] of Object.entries(options.files ?? {})) writeFile(dir, name, content);
  return dir;
}

/** A temporary copy of a folder under samples/. */
export function copySample(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `csv-wave-${name}-`));
  cpSync(new URL(`../../samples/${name}/`, import.meta.url), dir, { recursive: true });
  return dir;
}

/** The session's tasks as csv-wave reads them back (output cells unguarded), by id. */
export function readRows(dir: string): Map<string, TaskRow> {
  return new Map(readTasksFile(join(dir, 'tasks.csv')).rows.map((row) => [row.id, row]));
}

/** The session's tasks.csv as text. */
export function readTasksText(dir: string): string {
  return readFileSync(join(dir, 'tasks.csv'), 'utf8');
}

function writeFile(dir: string, name: string, content: string | Buffer): void {
  const path = join(dir, name);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}
