import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { isRunning, spawnCli, waitFor } from '../helpers/spawn-cli.js';

// A command may start a process that leaves its process group (setsid, a daemon): a kill of
// the group does not reach it. It is found by the CSV_WAVE_* environment it inherited.

const kCanFind = existsSync('/proc/self/environ') && existsSync('/usr/bin/setsid');

/** Starts a process outside the task's group, records its pid in `<id>.escaped`, then waits forever. */
const kEscapingCmd =
  `setsid sh -c 'echo $$ > "$CSV_WAVE_TASK_ID.escaped"; exec sleep 600' & ` +
  `while [ ! -s "$CSV_WAVE_TASK_ID.escaped" ]; do sleep 0.01; done; sleep 600`;

describe.runIf(kCanFind)('processes that left their command\'s process group', () => {
  it('are ended when a signal stops the run and their tasks are killed after the grace', async () => {
    const dir = buildSession([
      { id: 'a', description: 'escapes', role: 'r' },
      { id: 'b', description: 'escapes', role: 'r' },
    ]);
    const run = spawnCli('run', dir, '--cmd', kEscapingCmd, '--concurrency', '2', '--grace', '0');
    const escaped = (id: string) => join(dir, `${id}.escaped`);
    await waitFor(() => ['a', 'b'].every((id) => existsSync(escaped(id)) && readFileSync(escaped(id), 'utf8').trim() !== ''), 'a and b to start');
    const pids = ['a', 'b'].map((id) => Number(readFileSync(escaped(id), 'utf8')));
    expect(pids.every(isRunning)).toBe(true);
    run.child.kill('SIGTERM');
    const stopped = await run.exited;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).toMatch(/Stopped 2 running task\(s\)/);
    await waitFor(() => !pids.some(isRunning), 'the escaped processes to be gone');
    expect(readRows(dir).get('a')).toMatchObject({ status: 'pending' });
  });
});
