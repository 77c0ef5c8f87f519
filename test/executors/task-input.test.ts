import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { taskInputSchema, type TaskInput } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { readRows } from '../helpers/session-builder.js';
import { docBlocks, docFile } from '../helpers/readme.js';

/** The page that documents the task input. */
const kPage = 'docs/executors.md';

/** A fresh starter session (init --template generic) and a folder for the page's scripts. */
async function starter(): Promise<{ dir: string; scripts: string }> {
  const root = mkdtempSync(join(tmpdir(), 'csv-wave-task-input-'));
  const dir = join(root, 'batch');
  const init = await runCli('init', dir, '--template', 'generic');
  expect(init.code, init.stderr).toBe(0);
  return { dir, scripts: root };
}

describe('the task input, as docs/executors.md documents it', () => {
  test('the documented example is a valid task input', () => {
    const example = docBlocks(kPage, 'json').find((block) => block.includes('"prev_context"'));
    expect(example).toBeDefined();
    expect(() => taskInputSchema.parse(JSON.parse(example!))).not.toThrow();
  });

  test('a module written from the docs runs: it reads task.row and task.upstream', async () => {
    const { dir, scripts } = await starter();
    const module = join(scripts, 'report.mjs');
    writeFileSync(module, docFile(kPage, 'report.mjs'));
    const run = await runCli('run', dir, '--module', module);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('STEP-001')!.findings).toMatch(/^STEP-001 \(attempt 1\): Replace this row with your first task/);
    const report = rows.get('REPORT-001')!.findings;
    expect(report).toMatch(/^REPORT-001 \(attempt 1\): STEP-001: STEP-001 \(attempt 1\): .*; STEP-002: STEP-002 \(attempt 1\): /);
  });

  test('a command reads the documented fields from stdin, exactly those', async () => {
    const { dir, scripts } = await starter();
    writeFileSync(join(scripts, 'agent.mjs'), docFile(kPage, 'agent.mjs'));
    // Each task keeps a copy of its stdin to be checked against the schema.
    const run = await runCli('run', dir, '--cmd', `tee {id}.input.json | node ${join(scripts, 'agent.mjs')}`);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('STEP-001')!.findings).toBe('worker STEP-001 in wave 1: Replace this row with your first task; it runs in wave 1.');
    expect(rows.get('REPORT-001')!.findings).toMatch(/^reporter REPORT-001 in wave 2: Sum up/);
    // The package's exported type is the schema's: this is checked by `npm run typecheck`.
    const input: TaskInput = taskInputSchema.parse(JSON.parse(readFileSync(join(dir, 'REPORT-001.input.json'), 'utf8')));
    expect(input).toMatchObject({ id: 'REPORT-001', wave: 2, attempt: 1, session: dir });
    expect(input.row.description).toMatch(/^Sum up/);
    expect(input.upstream.deps.map((dep) => [dep.id, dep.status])).toEqual([
      ['STEP-001', 'completed'],
      ['STEP-002', 'completed'],
    ]);
    expect(input.prev_context).toContain('[Task STEP-001] worker STEP-001 in wave 1');
  });
});
