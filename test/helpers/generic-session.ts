import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { tempSession } from './temp-session.js';

/** A row of a hand-made tasks.csv: column name → cell. `id`, `description` and `role` are needed. */
export type RowInput = Record<string, string>;

const kDefaultColumns = ['id', 'title', 'description', 'role', 'deps', 'context_from', 'exec_mode'];

/** tasks.csv text for the rows: the usual input columns, then any other column a row names. */
export function tasksCsv(rows: readonly RowInput[]): string {
  const columns = [...kDefaultColumns];
  for (const row of rows) for (const name of Object.keys(row)) if (!columns.includes(name)) columns.push(name);
  const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
  const lines = [columns.join(','), ...rows.map((row) => columns.map((name) => quote(row[name] ?? '')).join(','))];
  return `${lines.join('\n')}\n`;
}

/** A temporary session of the `generic` pipeline (any role) holding these rows. */
export function genericSession(rows: readonly RowInput[], files: Record<string, string> = {}): string {
  return tempSession(tasksCsv(rows), { 'session.json': '{"pipeline":"generic"}', ...files });
}

/** The session's tasks as csv-wave reads them back (output cells unguarded), by id. */
export function readRows(dir: string): Map<string, TaskRow> {
  return new Map(readTasksFile(join(dir, 'tasks.csv')).rows.map((row) => [row.id, row]));
}

/** A CSV file as records keyed by column name. */
export function readCsvRecords(path: string): Record<string, string>[] {
  return parse(readFileSync(path, 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
}

/** Absolute path of a file under test/fixtures/. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** A task result as a command prints it: `printf %s {description}` with this as the description. */
export function resultText(result: unknown): string {
  return JSON.stringify(result);
}
