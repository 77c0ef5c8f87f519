import { existsSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { buildSession } from '../helpers/session-builder.js';
import { isRunning, spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** The session folder, and a symlink to it elsewhere. */
function sessionAndLink(): { real: string; link: string } {
  const real = buildSession([{ id: 'LONG', description: 'runs long', role: 'r' }]);
  const link = join(mkdtempSync(join(tmpdir(), 'csv-wave-link-')), 'session');
  symlinkSync(real, link);
  return { real: realpathSync(real), link };
}

describe('commands left running by a run killed with SIGKILL', () => {
  test.runIf(existsSync('/proc/self/environ')).each([
    ['the same path', 'real', 'real'],
    ['a symlink, resumed by its real path', 'link', 'real'],
    ['its real path, resumed through a symlink', 'real', 'link'],
  ] as const)('are ended when the session runs again, before any task starts (run through %s)', async (_, runBy, resumeBy) => {
    const paths = sessionAndLink();
    const pids = mkdtempSync(join(tmpdir(), 'csv-wave-pids-'));
    const run = spawnCli('run', paths[runBy], '--cmd', `echo $$ > ${pids}/{id}.pid; exec sleep 60`);
    await waitFor(() => existsSync(join(pids, 'LONG.pid')) && readFileSync(join(pids, 'LONG.pid'), 'utf8').trim() !== '', 'the command to start');
    run.child.kill('SIGKILL');
    await run.exited;
    const orphan = Number(readFileSync(join(pids, 'LONG.pid'), 'utf8'));
    expect(isRunning(orphan)).toBe(true);

    const resumed = await spawnCli('resume', paths[resumeBy], '--cmd', 'echo again').exited;
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/Ended 1 command\(s\) an interrupted run of this session left running/);
    await waitFor(() => !isRunning(orphan), 'the orphan to end');
    expect(resumed.stdout).toMatch(/\[DONE\] LONG .*again/);
  });
});
