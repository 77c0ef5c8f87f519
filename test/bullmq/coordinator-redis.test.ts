import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lines, readyWorker as readyWorkerWith, waitingCommand } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/** Tasks A and B, A first (priority), with a known session id, so that workers can start before the run. */
function twoTaskSession(sessionId: string): string {
  return buildSession([
    { id: 'A', description: 'first', role: 'worker', priority: 'P0' },
    { id: 'B', description: 'second', role: 'worker' },
  ], { sessionId });
}

/** A worker with a short stalled-job check, ready to take jobs. */
function readyWorker(url: string, sessionId: string): Promise<SpawnedCli> {
  return readyWorkerWith(url, '--session-id', sessionId, '--stalled-interval', '2');
}

describe('--redis-timeout flag', () => {
  it('is checked: a positive number of seconds, only with the bullmq backend (exit 2, naming the flag)', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    for (const bad of ['0', '-1', 'soon', '']) {
      const run = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', 'redis://127.0.0.1:1', '--redis-timeout', bad);
      expect(run.code, bad).toBe(2);
      expect(run.stderr).toContain('`--redis-timeout`');
    }
    const local = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'local', '--redis-timeout', '5');
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--redis-timeout goes with --backend bullmq');
    // No --backend and a session without a bullmq backend: refused too, before any task runs.
    const unset = await runCli('run', dir, '--cmd', 'echo x', '--redis-timeout', '5');
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('--redis-timeout goes with the bullmq backend');
    expect(readRows(dir).get('A')?.status).not.toBe('completed');
    const help = await runCli('run', '--help');
    expect(help.stdout).toContain('--redis-timeout <seconds>');
  });
});

describe('--batch with --backend bullmq', () => {
  it('is refused before any task runs (exit 2, naming both flags)', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:1/v1', '--batch',
      '--backend', 'bullmq', '--redis', 'redis://127.0.0.1:1');
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('--batch');
    expect(run.stderr).toContain('--backend bullmq');
    // Refused before the first write: tasks.csv is as it was (test/bullmq/refused-run.test.ts checks every byte).
    expect(readRows(dir).get('A')).toMatchObject({ status: '', findings: '' });
  });
});

describe.runIf(kRunRedisTests)('the coordinator when Redis goes away', () => {
  let redis: RedisServer;
  const spawned: SpawnedCli[] = [];
  const workers: SpawnedCli[] = [];
  beforeEach(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const child of spawned.splice(0)) child.child.kill('SIGKILL');
    // SIGTERM, not SIGKILL: a worker ends its command launcher (Redis is back by now).
    for (const worker of workers) worker.child.kill('SIGTERM');
    await Promise.all(workers.splice(0).map((worker) => worker.exited));
    await redis?.dispose();
  }, 120_000);

  it('Redis away longer than --redis-timeout: the run stops (exit 1), starts nothing more, and resume goes on', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = twoTaskSession('away-test');
    workers.push(await readyWorker(redis.url, 'away-test'));
    const args = ['--cmd', waitingCommand(marks), '--concurrency', '1', '--backend', 'bullmq', '--redis', redis.url];
    const coordinator = spawnCli('run', dir, ...args, '--redis-timeout', '3');
    spawned.push(coordinator);
    await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'task A started on the worker');
    await redis.stop();
    const ended = await coordinator.exited;
    expect(ended.code, ended.stderr).toBe(1);
    expect(ended.stderr).toContain('Redis does not answer');
    expect(ended.stdout + ended.stderr).toContain('Redis did not answer for 3 s (--redis-timeout)');
    expect(ended.stdout + ended.stderr).toContain(`csv-wave resume ${dir}`);
    // Nothing more started: B never ran; A went back to pending; tasks.csv is whole.
    const rows = readRows(dir);
    expect(rows.get('A')?.status).toBe('pending');
    // B never started: its status cell reads pending, as the run's first write of tasks.csv made it.
    expect(rows.get('B')?.status).toBe('pending');
    expect(lines(join(marks, 'B.pids'))).toEqual([]);

    // Redis back (without its data: the test server keeps none); resume runs both.
    await redis.restart();
    writeFileSync(join(marks, 'release'), '');
    const resumed = await runCli('resume', dir, ...args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect([...readRows(dir).values()].map((row) => [row.id, row.status, row.findings])).toEqual([
      ['A', 'completed', 'done-A'],
      ['B', 'completed', 'done-B'],
    ]);
  });

  it('Ctrl-C while Redis is away ends the run without waiting for Redis; the running task goes back to pending', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = twoTaskSession('ctrl-c-away');
    workers.push(await readyWorker(redis.url, 'ctrl-c-away'));
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--concurrency', '1', '--grace', '0', '--backend', 'bullmq', '--redis', redis.url);
    spawned.push(coordinator);
    await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'task A started on the worker');
    await redis.stop();
    // The default --redis-timeout (60 s) has not run out: only the signal ends this run.
    coordinator.child.kill('SIGINT');
    const ended = await coordinator.exited;
    expect(ended.code, ended.stderr).toBe(130);
    expect(ended.stdout + ended.stderr).not.toContain('Redis did not answer for');
    const rows = readRows(dir);
    expect(rows.get('A')?.status).toBe('pending');
    expect(rows.get('B')?.status).toBe('pending');
    // The journal is whole: a resume reads it without complaint once Redis is back.
    await redis.restart();
    writeFileSync(join(marks, 'release'), '');
    const resumed = await runCli('resume', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect([...readRows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
  });
});
