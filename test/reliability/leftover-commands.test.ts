import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { genericSession } from '../helpers/generic-session.js';
import { isRunning, spawnCli, waitFor } from '../helpers/spawn-cli.js';

describe('commands left running by a run killed with SIGKILL', () => {
  test.runIf(existsSync('/proc/self/environ'))('are ended when the session runs again, before any task starts', async () => {
    const dir = genericSession([{ id: 'LONG', description: 'runs long', role: 'r' }]);
    const pids = mkdtempSync(join(tmpdir(), 'csv-wave-pids-'));
    const run = spawnCli('run', dir, '--cmd', `echo $$ > ${pids}/{id}.pid; exec sleep 60`);
    await waitFor(() => existsSync(join(pids, 'LONG.pid')) && readFileSync(join(pids, 'LONG.pid'), 'utf8').trim() !== '', 'the command to start');
    run.child.kill('SIGKILL');
    await run.exited;
    const orphan = Number(readFileSync(join(pids, 'LONG.pid'), 'utf8'));
    expect(isRunning(orphan)).toBe(true);

    const resumed = await spawnCli('resume', dir, '--cmd', 'echo again').exited;
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Ended 1 command\(s\) an interrupted run of this session left running/);
    // Killed before the resume ran anything; gone once the system has reaped it.
    await waitFor(() => !isRunning(orphan), 'the orphan to be gone');
    expect(resumed.stdout).toMatch(/\[DONE\] LONG .*again/);
  });
});
