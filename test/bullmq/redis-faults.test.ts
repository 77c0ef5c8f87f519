import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lines, readyWorker, sessionWithId } from '../helpers/bullmq-session.js';
import { readRows } from '../helpers/generic-session.js';
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

/** The task of a job id (`<session>.r<run>.<task>.a<attempt>`). */
function taskOfJob(jobId: string): string {
  return /\.r[0-9a-f]{12}\.(.+)\.a\d+$/.exec(jobId)?.[1] ?? jobId;
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
    const dir = sessionWithId(sessionId, kTasks.map((id) => ({ id, description: id, role: 'worker' })));
    const worker = await readyWorker(url, ...workerArgs, '--concurrency', '2');
    started.push(worker);
    const coordinator = spawnCli('run', dir, '--cmd', gatedCommand(marks), '--concurrency', '4', '--backend', 'bullmq', '--redis', url);
    started.push(coordinator);
    const queue = `bull:csv-wave-${sessionId}`;
    const running = () => kTasks.filter((id) => runs(id) > 0);
    const waitingJobs = async () => (await admin!.lrange(`${queue}:wait`, 0, -1)).map(taskOfJob);
    let waiting: string[] = [];
    await waitFor(() => running().length === 2, 'two tasks running on the worker');
    // Polled apart from waitFor's condition, which is synchronous.
    while ((waiting = await waitingJobs()).length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    coordinator.child.kill('SIGSTOP');
    const unread = running()[0]!;
    writeFileSync(join(marks, `release-${unread}`), '');
    await waitFor(() => new RegExp(`\\[JOB\\] \\S+\\.${unread}\\.a1 completed`).test(worker.stdoutSoFar()) && running().length === 3, `${unread} finished and a waiting job taken`);
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
});
