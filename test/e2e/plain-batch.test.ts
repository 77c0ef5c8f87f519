import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

/** A plain batch as a GNU parallel user writes it: an id and columns of their own, nothing of the brainstorm's. */
const kBatch = 'id,url,size\na,http://x/a,1\nb,http://x/b,2\n';

describe('a plain batch needs only an id and something to run', () => {
  test('plan and run keep its columns and add only wave, status, findings and error', async () => {
    const dir = buildSession(kBatch);
    const plan = await runCli('plan', dir);
    expect(plan.code, plan.stderr).toBe(0);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8').split('\n')[0]).toBe('id,url,size,wave,status,findings,error');
    const run = await runCli('run', dir, '--cmd', 'echo {url} {size}');
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    expect(text.split('\n')[0]).toBe('id,url,size,wave,status,findings,error');
    expect(text).not.toMatch(/angle|gc_round|gc_signal|severity_summary|title/);
    expect(readRows(dir).get('b')).toMatchObject({ status: 'completed', findings: 'http://x/b 2' });
  });

  test('without session.json and without a role column it is a generic session', async () => {
    const dir = buildSession(kBatch, { session: null });
    const run = await runCli('run', dir, '--cmd', 'echo {id}');
    expect(run.code, run.stderr).toBe(0);
    expect([...readRows(dir).values()].map((row) => row.findings)).toEqual(['a', 'b']);
  });

  test('a column a row fills later is added then: a revision\'s deps', async () => {
    const dir = buildSession(kBatch);
    expect((await runCli('run', dir, '--cmd', 'echo {id}')).code).toBe(0);
    const revise = await runCli('revise', dir, 'a', '--feedback', 'again');
    expect(revise.code, revise.stderr).toBe(0);
    const header = readFileSync(join(dir, 'tasks.csv'), 'utf8').split('\n')[0]!;
    expect(header.startsWith('id,url,size,wave,status,findings,error')).toBe(true);
    expect(header.split(',')).toContain('deps');
    expect((await runCli('run', dir, '--cmd', 'echo {id}')).code).toBe(0);
    expect([...readRows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
  });

  test('a model or agent task without a description is refused at its row, before anything runs', async () => {
    const dir = buildSession(kBatch);
    const before = readFileSync(join(dir, 'tasks.csv'));
    const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/tasks\.csv:2: Empty description for task: a \(a openai task's prompt is its description\)/);
    expect(run.stderr).toMatch(/tasks\.csv:3: Empty description for task: b/);
    expect(readFileSync(join(dir, 'tasks.csv')).equals(before)).toBe(true);
  });

  test('the seed pipelines still need a description and a role column, said at the header', async () => {
    const dir = buildSession(kBatch, { session: { pipeline: 'brainstorm', topic: 't' } });
    const run = await runCli('validate', dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('tasks.csv:1: Missing required column: description (the brainstorm pipeline needs it)');
    expect(run.stderr).toContain('tasks.csv:1: Missing required column: role (the brainstorm pipeline needs it)');
    writeFileSync(join(dir, 'tasks.csv'), 'id,description,role\nA,,ideator\n');
    expect((await runCli('validate', dir)).stderr).toContain('tasks.csv:2: Empty description for task: A');
  });

  test('columns named __proto__ and constructor are cells like any other: in the command, the file and status --json', async () => {
    const dir = buildSession('id,__proto__,constructor\na,p1,c1\n');
    const run = await runCli('run', dir, '--cmd', 'echo [{__proto__}] [{constructor}] [{toString}]');
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    expect(text.split('\n')[0]).toBe('id,__proto__,constructor,wave,status,findings,error');
    const status = JSON.parse((await runCli('status', dir, '--json')).stdout) as { tasks: Record<string, unknown>[] };
    expect(Object.getOwnPropertyDescriptor(status.tasks[0], '__proto__')?.value).toBe('p1');
    expect(status.tasks[0]!['constructor']).toBe('c1');
    // A name no column has stays as written, whatever Object.prototype holds.
    expect(status.tasks[0]!['findings']).toBe('[p1] [c1] [{toString}]');
  });
});
