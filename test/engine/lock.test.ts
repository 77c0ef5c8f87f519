import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

const kSessionJson = JSON.stringify({ pipeline: 'generic' });
/** Each task waits until the test creates `release` in the session folder. */
const kGatedCmd = `${kLogRun}; while [ ! -f release ]; do sleep 0.02; done; echo "ran $CSV_WAVE_TASK_ID"`;

function session(): string {
  return buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode',
      '"a","A","first","r","","","csv-wave"',
      '"b","B","second","r","a","","csv-wave"',
      '',
    ].join('\n'),
    { session: kSessionJson },
  );
}

function lockPath(dir: string): string {
  return join(dir, '.csv-wave', 'lock');
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  // Never leave a run behind: let its tasks end, then wait for it.
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  await running.run.exited;
  running = undefined;
});

describe('session lock', () => {
  it('a second run while one is running exits 3 and names the pid holding the session', async () => {
    const dir = session();
    const first = spawnCli('run', dir, '--cmd', kGatedCmd);
    running = { run: first, dir };
    await waitFor(() => countRuns(dir).has('a'), 'the first run to start task a');
    const held = JSON.parse(readFileSync(lockPath(dir), 'utf8')) as { pid: number; hostname: string; started: string };
    expect(held.pid).toBe(first.child.pid);
    expect(held.hostname).toBe(hostname());

    // The first run shows task a running in tasks.csv at its next periodic rewrite; after
    // that it changes nothing until the gate opens, so any change is the second run's.
    await waitFor(() => readFileSync(join(dir, 'tasks.csv'), 'utf8').includes('"in_progress"'), 'tasks.csv to show task a running');
    const tasksBefore = readFileSync(join(dir, 'tasks.csv'));
    const second = await runCli('run', dir, '--cmd', kGatedCmd);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    expect(second.stderr).toMatch(/locked/i);
    // The refused run touched nothing: not tasks.csv, not the holder's lock.
    expect(readFileSync(join(dir, 'tasks.csv'))).toEqual(tasksBefore);
    expect(JSON.parse(readFileSync(lockPath(dir), 'utf8'))).toEqual(held);

    // resume and rerun take the same lock.
    expect((await runCli('resume', dir, '--cmd', kGatedCmd)).code).toBe(3);
    expect((await runCli('rerun', dir, '--task', 'a', '--cmd', kGatedCmd)).code).toBe(3);

    writeFileSync(join(dir, 'release'), '');
    const done = await first.exited;
    running = undefined;
    expect(done.code).toBe(0);
    expect(existsSync(lockPath(dir))).toBe(false);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1 });
  });

  it('a lock left by a process that is gone is taken over with a warning, and the run completes', async () => {
    const dir = session();
    const dead = spawn('true');
    const deadPid = await new Promise<number>((resolve, reject) => {
      dead.on('error', reject);
      dead.on('exit', () => resolve(dead.pid!));
    });
    mkdirSync(join(dir, '.csv-wave'));
    writeFileSync(lockPath(dir), JSON.stringify({ pid: deadPid, hostname: hostname(), started: new Date().toISOString() }));
    writeFileSync(join(dir, 'release'), '');

    const result = await runCli('run', dir, '--cmd', kGatedCmd);
    expect(result.stderr).toMatch(new RegExp(`warning: .*stale lock.*pid ${deadPid}`, 'i'));
    expect(result.code).toBe(0);
    expect(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => row.status)).toEqual([
      'completed',
      'completed',
    ]);
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  it('an unreadable lock file (torn by a crash) is taken over with a warning', async () => {
    const dir = session();
    mkdirSync(join(dir, '.csv-wave'));
    writeFileSync(lockPath(dir), '');
    writeFileSync(join(dir, 'release'), '');
    const result = await runCli('run', dir, '--cmd', kGatedCmd);
    expect(result.stderr).toMatch(/warning: .*stale lock/i);
    expect(result.code).toBe(0);
  });

  it('a lock taken on another machine is never presumed stale: exit 3, naming the host and the lock file', async () => {
    const dir = session();
    mkdirSync(join(dir, '.csv-wave'));
    const lock = JSON.stringify({ pid: 1, hostname: `not-${hostname()}`, started: new Date().toISOString() });
    writeFileSync(lockPath(dir), lock);
    const result = await runCli('run', dir, '--cmd', kGatedCmd);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`not-${hostname()}`);
    expect(result.stderr).toContain(lockPath(dir));
    expect(readFileSync(lockPath(dir), 'utf8')).toBe(lock);
    expect(countRuns(dir).size).toBe(0);
  });

  it('the lock is released when a run ends with failures, so the next run can start', async () => {
    const dir = session();
    const failed = await runCli('run', dir, '--cmd', 'exit 1');
    expect(failed.code).toBe(1);
    expect(existsSync(lockPath(dir))).toBe(false);
    writeFileSync(join(dir, 'release'), '');
    expect((await runCli('rerun', dir, '--failed', '--cmd', kGatedCmd)).code).toBe(0);
  });
});
