import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { RunEmitter } from '../../src/events/events.js';
import { readJournal } from '../../src/session/journal.js';
import { runSession } from '../../src/run/run-session.js';
import { statusOf } from '../../src/core/skip-cause.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { fixturePath } from '../helpers/test-files.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { isRunning, spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

// SIGINT and SIGTERM on a spawned CLI (the Ctrl-C of test/engine/resume.test.ts is the
// gentle case with SIGINT): stop starting tasks, let running ones finish or kill them
// after the grace, put the unfinished back to pending, write everything, exit 130 / 143.

/**
 * Tasks `a` and `b` wait for the file `release`, each with a grandchild (`sleep 600`) in
 * its process group; their pids go to `<id>.pid` and `<id>.child`. `c` finishes at once.
 */
const kCmd =
  `${kLogRun}; echo $$ > "$CSV_WAVE_TASK_ID.pid"; ` +
  `if [ "$CSV_WAVE_TASK_ID" != c ]; then sleep 600 & echo $! > "$CSV_WAVE_TASK_ID.child"; ` +
  `while [ ! -f release ]; do sleep 0.02; done; kill $!; fi; echo "ran $CSV_WAVE_TASK_ID"`;

function session(): string {
  return buildSession([
    { id: 'a', description: 'waits', role: 'r' },
    { id: 'b', description: 'waits', role: 'r' },
    { id: 'c', description: 'quick', role: 'r' },
    { id: 'd', description: 'after a', role: 'r', deps: 'a' },
  ]);
}

function rows(dir: string): Map<string, TaskRow> {
  return new Map(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => [row.id, row]));
}

function pidsOf(dir: string, id: string): number[] {
  return ['pid', 'child'].flatMap((kind) => {
    const file = join(dir, `${id}.${kind}`);
    return existsSync(file) ? [Number(readFileSync(file, 'utf8'))] : [];
  });
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  running.run.child.kill('SIGKILL');
  await running.run.exited;
  running = undefined;
});

/** Starts a run and waits until a and b run and c has finished. */
async function startRun(...flags: string[]): Promise<{ run: SpawnedCli; dir: string }> {
  const dir = session();
  const run = spawnCli('run', dir, '--cmd', kCmd, '--concurrency', '4', ...flags);
  running = { run, dir };
  await waitFor(() => pidsOf(dir, 'a').length === 2 && pidsOf(dir, 'b').length === 2, 'a and b to start');
  await waitFor(() => run.stdoutSoFar().includes('[DONE] c '), 'c to finish');
  return { run, dir };
}

describe('SIGTERM, SIGINT and SIGHUP', () => {
  it('SIGTERM: no new task starts, running ones finish within the grace; exit 143; resume goes on', async () => {
    const { run, dir } = await startRun();
    run.child.kill('SIGTERM');
    await waitFor(() => run.stderrSoFar().includes('SIGTERM: stopping'), 'the run to notice');
    writeFileSync(join(dir, 'release'), '');
    const stopped = await run.exited;
    running = undefined;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stdout).toMatch(/Interrupted: no new task was started/);
    const byId = rows(dir);
    for (const id of ['a', 'b', 'c']) expect(byId.get(id), id).toMatchObject({ status: 'completed', findings: `ran ${id}` });
    expect(statusOf(byId.get('d')!)).toBe('pending');
    expect(readJournal(dir)).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);

    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });

  it('SIGINT: running tasks that outlast --grace are killed with their process groups and put back to pending; exit 130', async () => {
    const { run, dir } = await startRun('--grace', '0.5');
    const commands = [...pidsOf(dir, 'a'), ...pidsOf(dir, 'b')];
    expect(commands.every(isRunning)).toBe(true);
    run.child.kill('SIGINT');
    const stopped = await run.exited;
    running = undefined;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(/running tasks get 0\.5s to finish/);
    expect(stopped.stderr).toMatch(/Stopped 2 running task\(s\) \(a, b\); they are pending again/);
    expect(stopped.stdout).toMatch(/running tasks had 0\.5s to finish, and the 2 that had not \(a, b\) were stopped and put back to pending/);

    // Everything is written: tasks.csv parses and shows a and b pending again (not failed), c done.
    const byId = rows(dir);
    expect(byId.get('a')).toMatchObject({ status: 'pending', findings: '', error: '' });
    expect(byId.get('b')).toMatchObject({ status: 'pending', findings: '', error: '' });
    expect(byId.get('c')).toMatchObject({ status: 'completed', findings: 'ran c' });
    expect(statusOf(byId.get('d')!)).toBe('pending');
    expect(readJournal(dir)).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    // The commands and their grandchildren are gone: nothing is left running unwatched.
    await waitFor(() => !commands.some(isRunning), 'the killed commands to be gone');

    writeFileSync(join(dir, 'release'), '');
    const resumed = await runCli('resume', dir, '--cmd', kCmd);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect([...rows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 2, b: 2, c: 1, d: 1 });
  });

  it('a second SIGTERM ends the grace at once: running tasks are killed and pending; exit 143', async () => {
    const { run, dir } = await startRun(); // the default grace, 30 s, is not waited for
    const commands = [...pidsOf(dir, 'a'), ...pidsOf(dir, 'b')];
    run.child.kill('SIGTERM');
    await waitFor(() => run.stderrSoFar().includes('SIGTERM: stopping'), 'the run to notice');
    run.child.kill('SIGTERM');
    const stopped = await run.exited;
    running = undefined;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).toMatch(/stopping the running tasks now/);
    expect(stopped.stdout).toMatch(/the 2 running task\(s\) \(a, b\) were stopped at once and put back to pending/);
    const byId = rows(dir);
    expect(statusOf(byId.get('a')!)).toBe('pending');
    expect(statusOf(byId.get('b')!)).toBe('pending');
    expect(byId.get('c')!.status).toBe('completed');
    await waitFor(() => !commands.some(isRunning), 'the killed commands to be gone');

    writeFileSync(join(dir, 'release'), '');
    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 2, b: 2, c: 1, d: 1 });
  });

  it('SIGHUP (the terminal closed) stops the run like SIGTERM: running tasks finish and are recorded, the lock goes; exit 129', async () => {
    const { run, dir } = await startRun(); // a and b have started, c has finished
    run.child.kill('SIGHUP');
    await waitFor(() => run.stderrSoFar().includes('SIGHUP: stopping'), 'the run to notice');
    writeFileSync(join(dir, 'release'), '');
    const stopped = await run.exited;
    running = undefined;
    expect(stopped.signal).toBeNull();
    expect(stopped.code, stopped.stderr).toBe(129);
    expect(stopped.stdout).toMatch(/Interrupted: no new task was started/);
    const byId = rows(dir);
    for (const id of ['a', 'b', 'c']) expect(byId.get(id), id).toMatchObject({ status: 'completed', findings: `ran ${id}` });
    expect(statusOf(byId.get('d')!)).toBe('pending');
    expect(readJournal(dir)).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);

    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });

  it('--grace must be a number of seconds from 0 to 24 days (the table\'s bounds)', async () => {
    const dir = session();
    const result = await runCli('run', dir, '--cmd', kCmd, '--grace', '-1');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Expected `--grace` to be a number of seconds from 0 to 2073600 (24 days), got `-1`');
    expect(countRuns(dir).size).toBe(0);
  });
});

describe('runSession with a signal and graceSeconds', () => {
  it('module tasks that outlast the grace (one spinning, one waiting) are stopped with their threads and pending again', async () => {
    const dir = buildSession([
      { id: 'SPIN', description: 'spin', role: 'r' },
      { id: 'WAIT', description: 'wait-for-abort', role: 'r' },
      { id: 'OK', description: 'ok', role: 'r' },
      { id: 'LATER', description: 'ok', role: 'r', deps: 'OK' },
    ]);
    const events = new RunEmitter();
    const stop = new AbortController();
    // The signal comes once SPIN and WAIT run and OK is done (threads start lazily, so OK may
    // have to wait for one: the grace is for tasks that run, not for those in a queue).
    const seen = new Set<string>();
    const note = (what: string) => {
      seen.add(what);
      if (seen.has('start SPIN') && seen.has('start WAIT') && seen.has('done OK')) stop.abort();
    };
    events.on('task:start', ({ id }) => note(`start ${id}`));
    events.on('task:done', ({ id }) => note(`done ${id}`));
    const summary = await runSession(dir, {
      executor: { type: 'module', path: fixturePath('module-behaviours.mjs') },
      concurrency: 3,
      threads: 3,
      graceSeconds: 0.3,
      signal: stop.signal,
      events,
    });
    expect(summary.stopped).toBe('signal');
    expect(summary.exitCode).toBe(1);
    const byId = readRows(dir);
    expect(byId.get('SPIN')).toMatchObject({ status: 'pending', error: '' });
    expect(byId.get('WAIT')).toMatchObject({ status: 'pending', error: '' });
    expect(byId.get('OK')!.status).toBe('completed');
    expect(statusOf(byId.get('LATER')!)).toBe('pending');
    expect(readJournal(dir)).toEqual([]);
  });

  it('graceSeconds must be a number ≥ 0', async () => {
    const dir = session();
    await expect(runSession(dir, { executor: { type: 'command', template: 'true' }, graceSeconds: -1 })).rejects.toMatchObject({
      code: 'USAGE',
    });
  });
});
