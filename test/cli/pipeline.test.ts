import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadSession } from '../../src/session/load.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, copySample, readRows } from '../helpers/session-builder.js';

/** A plain CSV with roles of its own and no session.json, as a new user writes one. */
const kGreeterCsv = 'id,description,role,deps\nHELLO,say hello,greeter,\nBYE,say goodbye,greeter,HELLO\n';
const kBrainstormRoles = 'ideator, challenger, synthesizer, evaluator, gc-controller';

describe('a session that names no pipeline', () => {
  test('with roles of its own is generic: it validates and runs', async () => {
    const dir = buildSession(kGreeterCsv, { session: null });
    expect(await runCli('validate', dir)).toEqual({ code: 0, stdout: 'OK: 2 tasks, 2 waves\n', stderr: '' });
    const run = await runCli('run', dir, '--cmd', 'printf %s {description}');
    expect(run.code).toBe(0);
    expect([...readRows(dir).values()].map((row) => [row.id, row.status, row.findings])).toEqual([
      ['HELLO', 'completed', 'say hello'],
      ['BYE', 'completed', 'say goodbye'],
    ]);
  });

  test('with brainstorm roles only is still brainstorm (the seed sample without its session.json)', async () => {
    const dir = buildSession(readFileSync(join(copySample('brainstorm'), 'tasks.csv'), 'utf8'), { session: null });
    expect((await runCli('validate', dir)).code).toBe(0);
    expect(loadSession(dir).session.config.pipeline).toBe('brainstorm');
    expect(loadSession(buildSession(kGreeterCsv, { session: null })).session.config.pipeline).toBe('generic');
  });
});

describe('--pipeline', () => {
  test('brainstorm refuses roles of its own, naming the pipeline, its roles and how to accept any role', async () => {
    const dir = buildSession(kGreeterCsv, { session: null });
    const result = await runCli('validate', dir, '--pipeline', 'brainstorm');
    expect(result.code).toBe(2);
    const hint = `(the brainstorm pipeline takes ${kBrainstormRoles}; for roles of your own, pass --pipeline generic or set "pipeline": "generic" in session.json)`;
    expect(result.stderr).toBe(`${join(dir, 'tasks.csv')}:2: Invalid role: greeter ${hint}\n${join(dir, 'tasks.csv')}:3: Invalid role: greeter ${hint}\n`);
  });

  test('wins over session.json on every command that reads a session', async () => {
    const analyze = '{"pipeline": "analyze"}';
    const checks: [string, string[]][] = [
      ['validate', []],
      ['plan', []],
      ['status', []],
      ['graph', []],
      ['revise', ['HELLO', '--feedback', 'louder']],
      ['run', ['--cmd', 'printf %s {id}']],
      ['resume', ['--cmd', 'printf %s {id}']],
      ['rerun', ['--task', 'HELLO', '--cmd', 'printf %s {id}']],
    ];
    for (const [command, args] of checks) {
      const refused = await runCli(command, buildSession(kGreeterCsv, { session: analyze }), ...args);
      // status reads any file, valid or not.
      if (command !== 'status') expect(refused.code, `${command} without --pipeline`).toBe(2);
      const dir = buildSession(kGreeterCsv, { session: analyze });
      const accepted = await runCli(command, dir, ...args, '--pipeline', 'generic');
      expect(accepted.code, `${command} --pipeline generic: ${accepted.stderr}`).toBe(0);
    }
  });

  test('a name that is not a pipeline is a usage error', async () => {
    const result = await runCli('validate', buildSession(kGreeterCsv, { session: null }), '--pipeline', 'magic');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/brainstorm, analyze, generic/);
  });
});

describe('init --template generic', () => {
  test('writes a starter tasks.csv and session.json that validate and run', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-init-generic-')), 'batch');
    const init = await runCli('init', dir, '--template', 'generic', '--cmd', 'printf %s {id}');
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('Wrote 3 tasks in 2 waves');
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toEqual({
      pipeline: 'generic',
      executor: { type: 'command', cmd: 'printf %s {id}' },
    });
    expect(existsSync(join(dir, 'tasks.csv'))).toBe(true);
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    expect([...readRows(dir).values()].map((row) => [row.id, row.role, row.status])).toEqual([
      ['STEP-001', 'worker', 'completed'],
      ['STEP-002', 'worker', 'completed'],
      ['REPORT-001', 'reporter', 'completed'],
    ]);
  });

  test('refuses the options of the other templates', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-init-generic-')), 'batch');
    const result = await runCli('init', dir, '--template', 'generic', '--angles', 'a;b');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--angles goes with --template brainstorm or analyze/);
    expect(existsSync(dir)).toBe(false);
  });
});
