import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { jobIdSource, lines, readyWorker as readyWorkerWith, redisForFile, waitingCommand } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests, startRedis } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/** A one-task session whose id is set, so that workers can be started before its run. */
function oneTaskSession(sessionId: string): string {
  return buildSession([{ id: 'A', description: 'waits for release', role: 'worker' }], { sessionId });
}

/** A worker with a short stalled-job check, ready to take jobs. */
function readyWorker(url: string, sessionId: string): Promise<SpawnedCli> {
  return readyWorkerWith(url, '--session-id', sessionId, '--stalled-interval', '2');
}

/** The attempts of task A the run recorded. */
function attemptsOfA(dir: string): { outcome: string }[] {
  return lines(join(dir, 'attempts.ndjson'))
    .map((line) => JSON.parse(line) as { task: string; outcome: string })
    .filter((line) => line.task === 'A');
}

const redis = redisForFile();

describe.runIf(kRunRedisTests)('--backend bullmq faults', () => {
  it('a Redis that does not answer at start is exit 2, naming the URL with its password masked', async () => {
    const gone = await startRedis();
    await gone.dispose();
    const url = `redis://user:s3cret@127.0.0.1:${gone.port}`;
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    const run = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', url);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`Redis at redis://user:***@127.0.0.1:${gone.port} cannot be reached (connect ECONNREFUSED`);
    expect(run.stderr).toMatch(/start it/);
    expect(run.stderr + run.stdout).not.toContain('s3cret');
    expect(readRows(dir).get('A')?.status).not.toBe('completed');
    // The same from session.json's backend, with no flag.
    const configured = buildSession([{ id: 'A', description: 'a', role: 'worker' }], {
      session: JSON.stringify({ pipeline: 'generic', backend: { type: 'bullmq', url } }),
    });
    const fromConfig = await runCli('run', configured, '--cmd', 'echo x');
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stderr).toContain(`Redis at redis://user:***@127.0.0.1:${gone.port} cannot be reached`);
    const worker = await runCli('worker', '--redis', url, '--session-id', 'x');
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('redis://user:***@');
    expect(worker.stderr).not.toContain('s3cret');
  });

  it('a worker killed with kill -9 mid-job: another worker finishes the job, merged once, run at most twice', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = oneTaskSession('kill-test');
    const first = await readyWorker(redis.url, 'kill-test');
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url);
    let second: SpawnedCli | undefined;
    try {
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'the task started on the first worker');
      first.child.kill('SIGKILL');
      await first.exited;
      second = await readyWorker(redis.url, 'kill-test');
      await waitFor(() => lines(join(marks, 'A.pids')).length === 2, 'the task started again on the second worker');
      writeFileSync(join(marks, 'release'), '');
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      coordinator.child.kill('SIGKILL');
      second?.child.kill('SIGTERM');
    }
    const secondOut = await second!.exited;
    expect(secondOut.stdout).toMatch(new RegExp(`\\[JOB\\] ${jobIdSource('kill-test', 'A', 1)} completed`));
    expect(lines(join(marks, 'A.pids'))).toHaveLength(2);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    expect(attemptsOfA(dir)).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  });

  it('a stalled job run by two workers, both replying: the reply is merged once', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = oneTaskSession('stall-test');
    const first = await readyWorker(redis.url, 'stall-test');
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url);
    let second: SpawnedCli | undefined;
    try {
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'the task started on the first worker');
      // Stopped, the first worker renews no lock: the job stalls and goes to the second one.
      first.child.kill('SIGSTOP');
      second = await readyWorker(redis.url, 'stall-test');
      await waitFor(() => lines(join(marks, 'A.pids')).length === 2, 'the task started again on the second worker');
      first.child.kill('SIGCONT');
      writeFileSync(join(marks, 'release'), '');
      // Both workers reply for the one attempt.
      await waitFor(
        () => [first, second!].every((worker) => new RegExp(`\\[JOB\\] ${jobIdSource('stall-test', 'A', 1)}`).test(worker.stdoutSoFar())),
        'both workers to reply',
        120_000,
      );
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      first.child.kill('SIGCONT');
      coordinator.child.kill('SIGKILL');
      first.child.kill('SIGTERM');
      second?.child.kill('SIGTERM');
    }
    await Promise.all([first.exited, second!.exited]);
    expect(lines(join(marks, 'A.pids'))).toHaveLength(2);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    expect(attemptsOfA(dir)).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  });

  it('the coordinator killed with kill -9 mid-job: resume re-attaches to the running job, which runs once', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = oneTaskSession('resume-test');
    const worker = await readyWorker(redis.url, 'resume-test');
    const args = ['--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url];
    try {
      const killed = spawnCli('run', dir, ...args);
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'the task started on the worker');
      killed.child.kill('SIGKILL');
      await killed.exited;
      const resumed = spawnCli('resume', dir, ...args);
      // The job of attempt 1 is the one already running: resume waits for it instead of adding another.
      await waitFor(() => resumed.stderrSoFar().includes('tasks go to queue'), 'the resumed coordinator');
      writeFileSync(join(marks, 'release'), '');
      const ran = await resumed.exited;
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      worker.child.kill('SIGTERM');
    }
    const out = await worker.exited;
    expect(out.stdout.split('\n').filter((line) => line.startsWith('[JOB] '))).toEqual([expect.stringMatching(new RegExp(`^\\[JOB\\] ${jobIdSource('resume-test', 'A', 1)} completed`))]);
    expect(lines(join(marks, 'A.pids'))).toHaveLength(1);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    expect(attemptsOfA(dir)).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  });

  it('Redis stopped mid-run and started again without its data: the lost attempt is retried and the run goes on', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = oneTaskSession('restart-test');
    const worker = await readyWorker(redis.url, 'restart-test');
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url);
    try {
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1, 'the task started on the worker');
      // The test server keeps nothing on disk: the job of attempt 1 is gone with it.
      await redis.restart();
      writeFileSync(join(marks, 'release'), '');
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toMatch(/\[RETRY\] A/);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      coordinator.child.kill('SIGKILL');
      worker.child.kill('SIGTERM');
    }
    const out = await worker.exited;
    expect(out.stdout).toMatch(new RegExp(`\\[JOB\\] ${jobIdSource('restart-test', 'A', 2)} completed`));
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    expect(attemptsOfA(dir).map((line) => line.outcome)).toEqual(['retried', 'completed']);
  });

  it('Ctrl-C on the coordinator: the jobs no worker took are removed from Redis, their tasks stay pending', { timeout: 600_000 }, async () => {
    const dir = buildSession(['A', 'B', 'C'].map((id) => ({ id, description: id, role: 'worker' })));
    mkdirSync(join(dir, '.csv-wave'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'session-id'), 'sigint-test\n');
    const client = new Redis(redis.url);
    let coordinator: SpawnedCli | undefined;
    try {
      const waitingJobs = () => client.lrange('bull:csv-wave-sigint-test:wait', 0, -1);
      // No worker: the three jobs wait in Redis.
      coordinator = spawnCli('run', dir, '--cmd', 'echo x', '--concurrency', '3', '--backend', 'bullmq', '--redis', redis.url, '--grace', '0');
      let waiting: string[] = [];
      for (let look = 0; look < 600 && waiting.length < 3; look++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        waiting = await waitingJobs();
      }
      expect([...waiting].sort()).toEqual(['A', 'B', 'C'].map((id) => expect.stringMatching(new RegExp(`^${jobIdSource('sigint-test', id, 1)}$`))));
      coordinator.child.kill('SIGINT');
      const ended = await coordinator.exited;
      expect(ended.code, ended.stderr).toBe(130);
      expect(await waitingJobs()).toEqual([]);
      expect(await client.exists(...waiting.map((id) => `bull:csv-wave-sigint-test:${id}`))).toBe(0);
    } finally {
      coordinator?.child.kill('SIGKILL');
      client.disconnect();
    }
    for (const row of readRows(dir).values()) expect(row.status).toBe('pending');
  });
});
