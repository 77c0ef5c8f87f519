import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, copySample } from '../helpers/session-builder.js';
import { kAllStatusesCsv, withPlainTasksPath } from './sessions.js';

interface ValidateJson {
  ok: boolean;
  tasks?: number;
  waves?: number;
  violations: { file: string; line: number; message: string }[];
}

describe('csv-wave validate', () => {
  test('exit code 0 and a one-line summary for a valid session', async () => {
    const result = await runCli('validate', copySample('brainstorm'));
    expect(result).toEqual({ code: 0, stdout: 'OK: 7 tasks, 6 waves\n', stderr: '' });
  });

  test('accepts the path of the tasks file as well as the folder, under any name', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    expect((await runCli('validate', join(dir, 'tasks.csv'))).code).toBe(0);
    renameSync(join(dir, 'tasks.csv'), join(dir, 'batch-7.csv'));
    const renamed = await runCli('validate', join(dir, 'batch-7.csv'));
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toBe('OK: 10 tasks, 5 waves\n');
  });

  test('--json on a valid session', async () => {
    const result = await runCli('validate', copySample('brainstorm'), '--json');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ ok: true, tasks: 7, waves: 6, violations: [] });
  });

  test('exit code 2 and every violation on stderr, nothing on stdout', async () => {
    const dir = buildSession(`id,description,role,deps
A,do,ideator,C
B,,ideator,
C,do,ideator,A
`, { session: null });
    const result = await runCli('validate', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(withPlainTasksPath(result.stderr, dir)).toBe(
      'tasks.csv:2: Circular dependency detected involving: A;C\ntasks.csv:3: Empty description for task: B\n',
    );
  });

  test('--json on a bad file: {ok: false, violations: [{file, line, message}]} and exit code 2', async () => {
    const dir = buildSession(
      `id,description,role,deps
A,do,wizard,GHOST
A,,ideator,
`,
      { session: '{"pipeline":"brainstorm"}' },
    );
    const result = await runCli('validate', dir, '--json');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('');
    const document = JSON.parse(result.stdout) as ValidateJson;
    expect(document.ok).toBe(false);
    expect(document.violations.map((v) => ({ ...v, file: withPlainTasksPath(v.file, dir) }))).toEqual([
      {
        file: 'tasks.csv',
        line: 2,
        message:
          'Invalid role: wizard (the brainstorm pipeline takes ideator, challenger, synthesizer, evaluator, gc-controller; ' +
          'for roles of your own, pass --pipeline generic or set "pipeline": "generic" in session.json)',
      },
      { file: 'tasks.csv', line: 2, message: 'Unknown dependency: GHOST' },
      { file: 'tasks.csv', line: 3, message: 'Empty description for task: A' },
      { file: 'tasks.csv', line: 3, message: 'Duplicate task ID: A' },
    ]);
  });

  test('--json on a file that does not parse', async () => {
    const dir = buildSession('id,description,role\nA,"open,ideator\n', { session: null });
    const result = await runCli('validate', dir, '--json');
    expect(result.code).toBe(2);
    const document = JSON.parse(result.stdout) as ValidateJson;
    expect(document.ok).toBe(false);
    expect(document.violations).toHaveLength(1);
    expect(document.violations[0]!.line).toBe(2);
    expect(document.violations[0]!.message).toMatch(/^CSV parse error: unclosed quote in field 2 \(description\)/);
  });

  test('an empty id and an empty role are reported with the message of their rule', async () => {
    const dir = buildSession(`id,description,role
,do,ideator
B,do,
`, { session: { pipeline: 'brainstorm' } });
    const result = await runCli('validate', dir, '--json');
    expect(result.code).toBe(2);
    const document = JSON.parse(result.stdout) as ValidateJson;
    expect(document.violations.map((v) => [v.line, v.message])).toEqual([
      [2, 'Invalid task ID: '],
      [3, 'Invalid role: '],
    ]);
  });

  test('the pipeline of session.json decides which roles are known', async () => {
    const csv = 'id,description,role\nA,do,explorer\nB,do,anything-at-all\n';
    const generic = await runCli('validate', buildSession(csv, { session: '{"pipeline":"generic"}' }));
    expect(generic.code).toBe(0);
    const analyze = await runCli('validate', buildSession(csv, { session: '{"pipeline":"analyze"}' }), '--json');
    expect(analyze.code).toBe(2);
    expect((JSON.parse(analyze.stdout) as ValidateJson).violations.map((v) => v.message)).toEqual([
      'Invalid role: anything-at-all (the analyze pipeline takes explorer, analyst, discussant, synthesizer; ' +
        'for roles of your own, pass --pipeline generic or set "pipeline": "generic" in session.json)',
    ]);
  });

  test('exit code 2 for a session.json that is not valid', async () => {
    const csv = readFileSync(join(copySample('brainstorm'), 'tasks.csv'), 'utf8');
    const broken = await runCli('validate', buildSession(csv, { session: '{"pipeline": ' }));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/session\.json:1:14: not valid JSON/);
    const unknown = await runCli('validate', buildSession(csv, { session: '{"pipeline":"unknown"}' }));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/session\.json:1: pipeline: /);
  });
});
