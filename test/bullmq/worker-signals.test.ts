import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSession } from '../helpers/session-builder.js';
import { lines, readyWorker, redisForEachTest, waitingCommand } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { isRunning, spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/**
 * A worker whose Redis is gone cannot hand a job back nor finish one: a signal must still
 * end it, with the commands of its jobs, without waiting for a Redis that may never return.
 */
describe.runIf(kRunRedisTests)('csv-wave worker: signals', () => {
  const each = redisForEachTest();

  /** A worker running task A's command, whose coordinator is then killed and Redis stopped. */
  async function workerRunningA(sessionId: string): Promise<{ worker: SpawnedCli; pid: number }> {
    const dir = buildSession([{ id: 'A', description: 'waits', role: 'worker' }], { sessionId });
    const worker = await readyWorker(each.redis.url, '--session-id', sessionId);
    each.started.push(worker);
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length === 1, 'the command running on the worker');
    coordinator.child.kill('SIGKILL');
    await coordinator.exited;
    return { worker, pid: Number(lines(join(each.marks, 'A.pids'))[0]) };
  }

  it('Redis gone: the first SIGTERM kills the running command and the worker exits', { timeout: 300_000 }, async () => {
    const { worker, pid } = await workerRunningA('gone-first');
    expect(isRunning(pid)).toBe(true);
    await each.redis.stop();
    worker.child.kill('SIGTERM');
    const ended = await worker.exited;
    expect(ended.signal, ended.stderr).toBeNull();
    expect(ended.stderr).toMatch(/Redis .* cannot be reached/);
    // Killed before the worker exited; on a loaded machine it may take a moment to die. Alive, it would wait for ever (no release).
    await waitFor(() => !isRunning(pid), 'the command to be killed');
  });

  it('Redis lost while the worker waits for its job: the second SIGTERM kills the command and the worker exits', { timeout: 300_000 }, async () => {
    const { worker, pid } = await workerRunningA('gone-second');
    worker.child.kill('SIGTERM');
    await waitFor(() => worker.stderrSoFar().includes('the running ones finish first'), 'the first signal taken');
    await each.redis.stop();
    expect(isRunning(pid)).toBe(true);
    worker.child.kill('SIGTERM');
    const ended = await worker.exited;
    expect(ended.signal, ended.stderr).toBeNull();
    await waitFor(() => !isRunning(pid), 'the command to be killed');
  });
});
