import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkExecutor } from '../../src/run/check-executor.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

const kRows = [
  { id: 'A', description: 'a', role: 'r' },
  { id: 'B', description: 'b', role: 'r' },
];
const kModuleText = "export default async (task) => ({ findings: `module saw ${task.id}` });\n";

/** Every task untouched: nothing started, tasks.csv not rewritten. */
function expectNothingRan(dir: string): void {
  expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['', '']);
}

describe('a bad executor stops the run before any task starts (exit 2)', () => {
  test('a --cmd whose program is not on PATH', async () => {
    const dir = buildSession(kRows);
    const result = await runCli('run', dir, '--cmd', 'no-such-program-csv-wave {id}');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'Command not found: no-such-program-csv-wave (the first word of "no-such-program-csv-wave {id}") is not a program on PATH; ' +
        'check its spelling, install it, or give its path\n',
    );
    expectNothingRan(dir);
  });

  test('builtins, paths, variables and programs on PATH are not refused', async () => {
    for (const template of ['printf %s {id}', 'cd . && echo {id}', 'sh -c "echo $0" {id}', '"$(command -v sh)" -c "echo ok"', 'X=1 echo {id}']) {
      const dir = buildSession(kRows);
      const result = await runCli('run', dir, '--cmd', template);
      expect(result.code, `${template}: ${result.stderr}`).toBe(0);
    }
  });

  test('a missing --module, a module that throws while loading, one that exits while loading', async () => {
    const missing = buildSession(kRows);
    const result = await runCli('run', missing, '--module', join(missing, 'nowhere.mjs'));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^No module at .*nowhere\.mjs: a relative module path \(--module or session\.json\) is relative to the session folder/);
    expectNothingRan(missing);

    const throwing = buildSession(kRows, { files: { 'broken.mjs': 'throw new Error("no config file");\nexport default async () => ({});\n' } });
    const thrown = await runCli('run', throwing, '--module', join(throwing, 'broken.mjs'));
    expect(thrown.code).toBe(2);
    expect(thrown.stderr).toMatch(/^Cannot load the module .*broken\.mjs: no config file\n$/);
    expectNothingRan(throwing);

    const exiting = buildSession(kRows, { files: { 'exits.mjs': 'process.exit(3);\n' } });
    const exited = await runCli('run', exiting, '--module', join(exiting, 'exits.mjs'));
    expect(exited.code).toBe(2);
    expect(exited.stderr).toMatch(/^Cannot load the module .*exits\.mjs: it ended its thread while loading \(exit code 3\)\n$/);
    expectNothingRan(exiting);
  });

  test('a module whose default export is not a function', async () => {
    const dir = buildSession(kRows, { files: { 'object.mjs': 'export default { findings: "x" };\n' } });
    const result = await runCli('run', dir, '--module', join(dir, 'object.mjs'));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/object\.mjs has no default export function \(its default export is object\)/);
    expectNothingRan(dir);
  });
});

describe('a relative module path is relative to the session folder, on the command line and in session.json', () => {
  test('--module mod.mjs and "module": "mod.mjs" name the same file, wherever csv-wave runs from', async () => {
    const fromFlag = buildSession(kRows, { files: { 'mod.mjs': kModuleText } });
    const flagRun = await runCli('run', fromFlag, '--module', 'mod.mjs');
    expect(flagRun.code, flagRun.stderr).toBe(0);
    expect(readRows(fromFlag).get('A')!.findings).toBe('module saw A');

    const fromConfig = buildSession(kRows, {
      files: { 'mod.mjs': kModuleText },
      session: JSON.stringify({ pipeline: 'generic', executor: { type: 'module', module: 'mod.mjs' } }),
    });
    const configRun = await runCli('run', fromConfig);
    expect(configRun.code, configRun.stderr).toBe(0);
    expect(readRows(fromConfig).get('B')!.findings).toBe('module saw B');
  });

  test('a path relative to the working folder but not to the session folder is refused with the rule', async () => {
    // Deeper than the working folder, so that the `..` of the relative path cannot climb back out of it.
    const dir = buildSession(kRows, { dir: join(mkdtempSync(join(tmpdir(), 'csv-wave-deep-')), 'a', 'b', 'c', 'd', 'e', 'f', 'session'), session: '{"pipeline": "generic"}' });
    const elsewhere = mkdtempSync(join(tmpdir(), 'csv-wave-module-'));
    writeFileSync(join(elsewhere, 'mod.mjs'), kModuleText);
    const fromCwd = relative(process.cwd(), join(elsewhere, 'mod.mjs'));
    const result = await runCli('run', dir, '--module', fromCwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`No module at ${join(dir, fromCwd)}: a relative module path (--module or session.json) is relative to the session folder`);
  });

  test('init --module records the path the same way, absolute', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-init-module-')), 'batch');
    const init = await runCli('init', dir, '--template', 'generic', '--module', 'mod.mjs');
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')).executor).toEqual({ type: 'module', module: join(dir, 'mod.mjs') });
    writeFileSync(join(dir, 'mod.mjs'), kModuleText);
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    expect(readRows(dir).get('REPORT-001')!.findings).toBe('module saw REPORT-001');
  });
});

describe('a module whose top-level code never finishes', () => {
  test('is refused once the load time is up, not waited on for ever (the lock would be held meanwhile)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-hang-module-'));
    const path = join(dir, 'hang.mjs');
    // A timer keeps the loading thread alive while its top level awaits what never comes.
    writeFileSync(path, 'setInterval(() => {}, 1000);\nawait new Promise(() => {});\nexport default async () => ({ findings: "never" });\n');
    const check = checkExecutor({ type: 'module', path }, ['id'], dir, 200);
    await expect(check).rejects.toThrow(/its top-level code did not finish within 0\.2 s/);
    await expect(check).rejects.toMatchObject({ code: 'INVALID_EXECUTOR' });
  });
});
