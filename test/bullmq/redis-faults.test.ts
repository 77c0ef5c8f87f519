import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jobIdSource, lines, readyWorker } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests, startRedis, type RedisOptions, type RedisServer } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/**
 * Issue 22's attack "Redis restarted with and without AOF, and Redis at maxmemory with
 * noeviction, during a run" (scripts/redis-faults.ts is the longer version, with figures).
 * Each command notes its shell's pid in `<marks>/<id>.pids` as it starts (one line per run)
 * and waits for `<marks>/release` or `<marks>/release-<id>`.
 */
function gatedCommand(marks: string): string {
  return `echo $$ >> ${marks}/{id}.pids; while [ ! -e ${marks}/release ] && [ ! -e ${marks}/release-{id} ]; do sleep 0.05; done; echo done-{id}`;
}

const kTasks = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'];

/** The outcomes attempts.ndjson holds for each task, in order. */
function outcomesByTask(dir: string): Map<string, string[]> {
  const byTask = new Map<string, string[]>();
  for (const line of lines(join(dir, 'attempts.ndjson'))) {
    const { task, outcome } = JSON.parse(line) as { task: string; outcome: string };
    byTask.set(task, [...(byTask.get(task) ?? []), outcome]);
  }
  return byTask;
}

/** The task of a job id of the session (`<session>.r<run>.<task>.a<attempt>`). */
function taskOfJob(sessionId: string, jobId: string): string {
  return new RegExp(`${jobIdSource(sessionId, /(.+)/, /\d+/)}$`).exec(jobId)?.[1] ?? jobId;
}

describe.runIf(kRunRedisTests)('Redis restarted, emptied or full during a --backend bullmq run', () => {
  let redis: RedisServer | undefined;
  let admin: Redis | undefined;
  let marks: string;
  const started: SpawnedCli[] = [];
  const runs = (id: string) => lines(join(marks, `${id}.pids`)).length;

  async function redisWith(options: RedisOptions = {}): Promise<RedisServer> {
    redis = await startRedis(options);
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    admin.on('error', () => undefined);
    return redis;
  }

  beforeEach(() => {
    marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
  });
  afterEach(async () => {
    writeFileSync(join(marks, 'release'), '');
    for (const spawned of started.splice(0)) spawned.child.kill('SIGKILL');
    admin?.disconnect();
    await redis?.dispose();
    redis = undefined;
  });

  /**
   * Six tasks on one worker (2 jobs at once), the coordinator 4 at once, stopped (SIGSTOP) at
   * the moment of the fault: one job finished whose reply it has not read, two running, one
   * waiting in Redis, two tasks not submitted yet.
   */
  async function busyRun(url: string, sessionId: string, workerArgs: string[]) {
    const dir = buildSession(kTasks.map((id) => ({ id, description: id, role: 'worker' })), { sessionId });
    const worker = await readyWorker(url, ...workerArgs, '--concurrency', '2');
    started.push(worker);
    const coordinator = spawnCli('run', dir, '--cmd', gatedCommand(marks), '--concurrency', '4', '--backend', 'bullmq', '--redis', url);
    started.push(coordinator);
    const queue = `bull:csv-wave-${sessionId}`;
    const running = () => kTasks.filter((id) => runs(id) > 0);
    const waitingJobs = async () => (await admin!.lrange(`${queue}:wait`, 0, -1)).map((jobId) => taskOfJob(sessionId, jobId));
    let waiting: string[] = [];
    await waitFor(() => running().length === 2, 'two tasks running on the worker');
    // Polled apart from waitFor's condition, which is synchronous.
    while ((waiting = await waitingJobs()).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    coordinator.child.kill('SIGSTOP');
    const unread = running()[0]!;
    writeFileSync(join(marks, `release-${unread}`), '');
    await waitFor(() => new RegExp(`\\[JOB\\] ${jobIdSource(sessionId, unread, 1)} completed`).test(worker.stdoutSoFar()) && running().length === 3, `${unread} finished and a waiting job taken`);
    waiting = await waitingJobs();
    const runningNow = running().filter((id) => id !== unread);
    expect(waiting).toHaveLength(1);
    return { dir, worker, coordinator, unread, running: runningNow, waiting, unsent: kTasks.filter((id) => id !== unread && !runningNow.includes(id) && !waiting.includes(id)) };
  }

  /** busyRun, then Redis killed with SIGKILL and started again (same port and folder), and the run to its end (exit 0). */
  async function crashedRun(options: RedisOptions, sessionId: string) {
    const server = await redisWith(options);
    const run = await busyRun(server.url, sessionId, ['--session-id', sessionId]);
    await server.crash();
    run.coordinator.child.kill('SIGCONT');
    await server.restart();
    writeFileSync(join(marks, 'release'), '');
    const ended = await run.coordinator.exited;
    expect(ended.code, ended.stderr).toBe(0);
    return { ...run, ended };
  }

  it('killed with SIGKILL and started again with its AOF (appendfsync always): every task completes once, every command ran once', { timeout: 600_000 }, async () => {
    const { ended, ...run } = await crashedRun({ appendOnly: true }, 'aof-crash');
    expect(ended.stdout).not.toContain('[RETRY]');
    for (const id of kTasks) {
      expect(readRows(run.dir).get(id), id).toMatchObject({ status: 'completed', findings: `done-${id}` });
      expect(runs(id), id).toBe(1);
      expect(outcomesByTask(run.dir).get(id), id).toEqual(['completed']);
    }
  });

  it('killed with SIGKILL, no AOF, started again empty: the lost jobs are retried, every task completes once in tasks.csv', { timeout: 600_000 }, async () => {
    const { ended, ...run } = await crashedRun({}, 'empty-crash');
    expect(ended.stdout).toMatch(/\[RETRY\] T\d attempt 1 failed \(transient\): The job \S+ vanished from Redis/);
    const outcomes = outcomesByTask(run.dir);
    for (const id of kTasks) expect(readRows(run.dir).get(id), id).toMatchObject({ status: 'completed', findings: `done-${id}` });
    // Running at the crash: their jobs vanished, the attempt is retried and the command runs again.
    for (const id of run.running) {
      expect(outcomes.get(id), id).toEqual(['retried', 'completed']);
      expect(runs(id), id).toBe(2);
    }
    // Waiting at the crash: retried, run once (its first job never started).
    for (const id of run.waiting) {
      expect(outcomes.get(id), id).toEqual(['retried', 'completed']);
      expect(runs(id), id).toBe(1);
    }
    // Finished, reply not read: merged if its event had reached the stopped coordinator's socket, else retried and run again.
    expect([['completed'], ['retried', 'completed']]).toContainEqual(outcomes.get(run.unread));
    expect(runs(run.unread)).toBe(outcomes.get(run.unread)!.length);
    for (const id of run.unsent) {
      expect(outcomes.get(id), id).toEqual(['completed']);
      expect(runs(id), id).toBe(1);
    }
  });

  it('emptied under a worker that serves every session: it serves the session on until the coordinator beats again, and exits on SIGTERM', { timeout: 600_000 }, async () => {
    const server = await redisWith();
    const run = await busyRun(server.url, 'empty-registry', []);
    // The coordinator stopped cannot beat: the worker reads a registry without the session.
    await server.crash();
    await server.restart();
    const missing = 'csv-wave-empty-registry is missing from the session registry';
    const letGo = 'csv-wave-empty-registry has no coordinator any more';
    await waitFor(() => run.worker.stdoutSoFar().includes(missing) || run.worker.stdoutSoFar().includes(letGo), 'the worker to read the emptied registry');
    run.coordinator.child.kill('SIGCONT');
    writeFileSync(join(marks, 'release'), '');
    const ended = await run.coordinator.exited;
    expect(ended.code, ended.stderr).toBe(0);
    for (const id of kTasks) expect(readRows(run.dir).get(id), id).toMatchObject({ status: 'completed', findings: `done-${id}` });
    // The coordinator left with its mark: let go at once.
    await waitFor(() => run.worker.stdoutSoFar().includes(letGo), 'the worker to let the finished session go');
    // Served once throughout, let go once at the end. Before, it let the session go at the
    // empty read and took it again at the next beat; the close of the session let go never
    // ended (ioredis, reconnecting), and the process lived on after SIGTERM.
    const count = (text: string) => run.worker.stdoutSoFar().split(text).length - 1;
    expect(count('taking jobs of csv-wave-empty-registry'), run.worker.stdoutSoFar()).toBe(1);
    expect(count(letGo)).toBe(1);
    run.worker.child.kill('SIGTERM');
    const stopped = await run.worker.exited;
    expect(stopped.code, stopped.stderr).toBe(0);
  });

  /** Tasks A then B (coordinator --concurrency 1) on one worker; resolves once A runs. */
  async function aThenB(url: string, sessionId: string, ...runArgs: string[]) {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'worker', priority: 'P0' },
      { id: 'B', description: 'second', role: 'worker' },
    ], { sessionId });
    started.push(await readyWorker(url, '--session-id', sessionId));
    const args = ['--cmd', gatedCommand(marks), '--concurrency', '1', '--backend', 'bullmq', '--redis', url];
    const coordinator = spawnCli('run', dir, ...args, ...runArgs);
    started.push(coordinator);
    await waitFor(() => runs('A') === 1, 'task A running on the worker');
    return { dir, args, coordinator };
  }

  /** Redis full: every write that may grow its memory is refused (maxmemory 1 byte, noeviction). */
  async function fill(): Promise<void> {
    await admin!.config('SET', 'maxmemory-policy', 'noeviction');
    await admin!.config('SET', 'maxmemory', '1');
  }

  it('full (maxmemory, noeviction) for a while: a reply is still stored, an add waits instead of failing its task, the run goes on', { timeout: 600_000 }, async () => {
    const server = await redisWith();
    const { dir, coordinator } = await aThenB(server.url, 'full-awhile');
    await fill();
    // A ends while Redis is full: BullMQ's finishing script writes the reply all the same (its first write is a removal).
    writeFileSync(join(marks, 'release-A'), '');
    const refused = "Redis refuses writes (OOM command not allowed when used memory > 'maxmemory')";
    await waitFor(
      () => coordinator.stdoutSoFar().includes('[DONE] A') && (coordinator.stderrSoFar().includes(refused) || /\[(RETRY|FAIL)\] B/.test(coordinator.stdoutSoFar())),
      "A's reply, and B's add refused",
    );
    await admin!.config('SET', 'maxmemory', '0');
    writeFileSync(join(marks, 'release'), '');
    const ended = await coordinator.exited;
    // Before: B's add failed as transient, retried twice within 3 s, and B failed unrun (exit 1).
    expect(ended.code, ended.stdout + ended.stderr).toBe(0);
    expect(ended.stderr).toContain(refused);
    expect(ended.stderr).toContain('Redis takes writes again; the run goes on');
    for (const id of ['A', 'B']) {
      expect(readRows(dir).get(id), id).toMatchObject({ status: 'completed', findings: `done-${id}` });
      expect(runs(id), id).toBe(1);
      expect(outcomesByTask(dir).get(id), id).toEqual(['completed']);
    }
  });

  it('full longer than --redis-timeout: the run stops (exit 1), B pending, and resume completes it', { timeout: 600_000 }, async () => {
    const server = await redisWith();
    const { dir, args, coordinator } = await aThenB(server.url, 'full-long', '--redis-timeout', '3');
    await fill();
    writeFileSync(join(marks, 'release-A'), '');
    const ended = await coordinator.exited;
    expect(ended.code, ended.stdout + ended.stderr).toBe(1);
    expect(ended.stdout + ended.stderr).toContain("Redis refused writes for 3 s (--redis-timeout): OOM command not allowed when used memory > 'maxmemory'");
    expect(ended.stdout + ended.stderr).toContain(`csv-wave resume ${dir}`);
    // Not failed: a full Redis is not B's fault (before, B failed and resume left it so).
    expect(readRows(dir).get('B')?.status).not.toBe('failed');
    expect(runs('B')).toBe(0);
    await admin!.config('SET', 'maxmemory', '0');
    writeFileSync(join(marks, 'release'), '');
    const resumed = await runCli('resume', dir, ...args);
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const id of ['A', 'B']) {
      expect(readRows(dir).get(id), id).toMatchObject({ status: 'completed', findings: `done-${id}` });
      // A's job, finished in Redis or still running when the run stopped, is awaited again, not run again.
      expect(runs(id), id).toBe(1);
    }
  });

  it('full at the start: exit 2 at once, saying so, nothing started; the run goes once Redis takes writes', { timeout: 300_000 }, async () => {
    const server = await redisWith();
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'full-start' });
    started.push(await readyWorker(server.url, '--session-id', 'full-start'));
    await fill();
    const args = ['--cmd', gatedCommand(marks), '--backend', 'bullmq', '--redis', server.url];
    // Spawned: before, the run printed an internal error (exit 70) and then never exited (a Redis connection left open).
    const full = spawnCli('run', dir, ...args);
    started.push(full);
    const ended = await full.exited;
    expect(ended.code, ended.stderr).toBe(2);
    expect(ended.stderr).toContain(
      `Redis at ${server.url} refuses writes (OOM command not allowed when used memory > 'maxmemory'): free memory in Redis or raise its maxmemory, then run again. No task was started.`,
    );
    expect(ended.stderr).not.toContain('internal error');
    expect(runs('A')).toBe(0);
    expect(readRows(dir).get('A')?.status).not.toBe('completed');
    await admin!.config('SET', 'maxmemory', '0');
    writeFileSync(join(marks, 'release'), '');
    const ran = await runCli('run', dir, ...args);
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
  });
});
