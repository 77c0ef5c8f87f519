import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

describe('rerun and resume remember the executor of the last run', () => {
  test('rerun --failed without --cmd runs the last run\'s command, and says so', async () => {
    const dir = buildSession([
      { id: 'A', description: 'a' },
      { id: 'B', description: 'b' },
    ]);
    // B fails until the file `ok` exists.
    const cmd = 'if [ "$CSV_WAVE_TASK_ID" = B ] && [ ! -f ok ]; then exit 1; fi; echo ran-{id}';
    expect((await runCli('run', dir, '--cmd', cmd, '--retries', '0')).code).toBe(1);
    expect(readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8')).toContain('ran-{id}');
    writeFileSync(join(dir, 'ok'), '');
    const rerun = await runCli('rerun', dir, '--failed');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain(`No executor given: this run uses the last run's (--cmd '${cmd.replaceAll("'", "'\\''")}'), recorded in .csv-wave/last-run.json`);
    expect(readRows(dir).get('B')).toMatchObject({ status: 'completed', findings: 'ran-B' });
  });

  test('a flag or session.json names the executor: the last run is not asked', async () => {
    const dir = buildSession([{ id: 'A', description: 'a' }]);
    expect((await runCli('run', dir, '--cmd', 'echo first', '--retries', '0')).code).toBe(0);
    const rerun = await runCli('rerun', dir, '--task', 'A', '--cmd', 'echo second');
    expect(rerun.stderr).not.toContain('No executor given');
    expect(readRows(dir).get('A')!.findings).toBe('second');
  });

  test('a session that never ran still needs an executor', async () => {
    const dir = buildSession([{ id: 'A', description: 'a' }]);
    const run = await runCli('resume', dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No executor: pass --cmd TEMPLATE');
  });
});
