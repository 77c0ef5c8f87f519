import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { expect } from 'vitest';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';

/**
 * Runs `<ID>.sh` from the session folder for a task that has one, and prints `<ID> ok`
 * for the others: a test writes the hostile scripts, the bystanders need none.
 */
export const kScriptOrOk = `if [ -f ./{id}.sh ]; then sh ./{id}.sh; else printf '%s ok' {id}; fi`;

/** Healthy tasks that must complete whatever their neighbours do, and one that runs after them. */
export const kBystanders: RowInput[] = [
  { id: 'OK-1', description: 'ok', role: 'r' },
  { id: 'OK-2', description: 'ok', role: 'r' },
  { id: 'AFTER', description: 'ok', role: 'r', deps: 'OK-1;OK-2' },
];

/** A generic session with the hostile rows, each with its `<ID>.sh`, and the bystanders. */
export function hostileSession(scripts: Record<string, string>, files: Record<string, string> = {}): string {
  const rows: RowInput[] = Object.keys(scripts).map((id) => ({ id, description: `hostile ${id}`, role: 'r' }));
  const scriptFiles = Object.fromEntries(Object.entries(scripts).map(([id, script]) => [`${id}.sh`, script]));
  return buildSession([...rows, ...kBystanders], { files: { ...scriptFiles, ...files } });
}

export function runScripts(dir: string, ...flags: string[]): Promise<CliRun> {
  return runCli('run', dir, '--cmd', kScriptOrOk, ...flags);
}

/**
 * What every hostile case checks besides its own task: the bystanders completed (and the
 * task after them ran), tasks.csv parses strictly — as a plain CSV and as csv-wave reads it —
 * with one field per column in every record, and holds no control character a terminal
 * or spreadsheet would act on.
 */
export function expectOthersIntact(dir: string, bystanders: readonly string[] = kBystanders.map((row) => row['id']!)): void {
  const rows = readRows(dir);
  for (const id of bystanders) {
    expect(rows.get(id), id).toMatchObject({ status: 'completed', error: '' });
  }
  expectTasksCsvValid(dir);
}

export function expectTasksCsvValid(dir: string): void {
  const text = readFileSync(join(dir, 'tasks.csv'), 'utf8');
  const records = parse(text, { bom: true, relax_column_count: false }) as string[][];
  const width = records[0]!.length;
  for (const record of records) expect(record).toHaveLength(width);
  expect(readTasksFile(join(dir, 'tasks.csv')).rows.length).toBe(records.length - 1);
  expect(text).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x9b]/);
  expect(text).not.toContain('\ufffe');
}

/** `status: error-or-findings` per task, for compact expectations. */
export function outcomes(dir: string): Record<string, string> {
  return Object.fromEntries([...readRows(dir)].map(([id, row]) => [id, `${row.status}: ${row.error || row.findings}`]));
}
