import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import { runCli } from '../helpers/cli.js';
import { copySample } from '../helpers/session-builder.js';

const kCommands = ['validate', 'plan', 'status', 'graph'];

/** A frame of a JavaScript stack trace, as printed for an internal error. */
const kStackFrame = /^\s+at /m;

describe('csv-wave, the program', () => {
  test('--help lists every command (exit code 0)', async () => {
    const result = await runCli('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: csv-wave');
    for (const command of kCommands) expect(result.stdout).toMatch(new RegExp(`^\\s+${command} \\[options\\] <session>`, 'm'));
  });

  test('--version prints the version (exit code 0)', async () => {
    const result = await runCli('--version');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('an unknown command is a usage error (exit code 2)', async () => {
    const result = await runCli('frobnicate', copySample('brainstorm'));
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });

  test('an unknown flag of the program is a usage error (exit code 2)', async () => {
    const result = await runCli('--frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--frobnicate'");
  });
});

describe.each(kCommands)('csv-wave %s', (command) => {
  test('--help names the command and its session argument (exit code 0)', async () => {
    const result = await runCli(command, '--help');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain(`Usage: csv-wave ${command} [options] <session>`);
    expect(result.stdout).toContain('--json');
  });

  test('`help <command>` gives the same help', async () => {
    const result = await runCli('help', command);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe((await runCli(command, '--help')).stdout);
  });

  test('an unknown flag is a usage error (exit code 2)', async () => {
    const result = await runCli(command, copySample('brainstorm'), '--no-such-flag');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown option '--no-such-flag'");
  });

  test('a missing session argument is a usage error (exit code 2)', async () => {
    const result = await runCli(command);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing required argument 'session'");
  });

  test('a session folder that does not exist: exit code 2, the path named, no stack trace', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'csv-wave-missing-')), 'no-such-session');
    const result = await runCli(command, missing);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(missing);
    expect(result.stderr).not.toMatch(kStackFrame);
    expect(result.stderr).not.toContain('internal error');
  });

  test('a folder without tasks.csv: exit code 2, the path named', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'csv-wave-empty-'));
    const result = await runCli(command, empty);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(empty, 'tasks.csv'));
    expect(result.stderr).not.toMatch(kStackFrame);
  });

  test('--json prints one JSON document, for success and for failure', async () => {
    const sample = copySample('brainstorm');
    const ok = await runCli(command, sample, '--json');
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('');
    // The whole of stdout is the document, and it is about this session: validate counts
    // its tasks, the others name each of them.
    const answer = JSON.parse(ok.stdout) as Record<string, unknown>;
    const ids = readTasksFile(join(sample, 'tasks.csv')).rows.map((row) => row.id);
    expect(ids).toHaveLength(7);
    if (command === 'validate') expect(answer).toMatchObject({ ok: true, tasks: ids.length, violations: [] });
    else for (const id of ids) expect(JSON.stringify(answer), id).toContain(id);

    const missing = join(mkdtempSync(join(tmpdir(), 'csv-wave-missing-')), 'no-such-session');
    const failed = await runCli(command, missing, '--json');
    expect(failed.code).toBe(2);
    expect(failed.stderr).toBe('');
    const document = JSON.parse(failed.stdout) as { ok: boolean; error: string };
    expect(document.ok).toBe(false);
    expect(document.error).toContain(missing);
  });
});
