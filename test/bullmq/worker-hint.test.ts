import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lines, readyWorker, redisForEachTest, waitingCommand } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** How many times a coordinator's stderr told how to start workers. */
function hints(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.includes('start workers with'));
}

describe.runIf(kRunRedisTests)('--backend bullmq: "start workers with" only while no worker serves the session', () => {
  const each = redisForEachTest();

  it('is not said to a run whose worker is connected; it is said once all its workers left while a task waits', { timeout: 300_000 }, async () => {
    const dir = buildSession([
      { id: 'A', description: 'waits', role: 'worker' },
      { id: 'B', description: 'after A', role: 'worker', deps: 'A' },
    ], { sessionId: 'hint-left' });
    const first = await readyWorker(each.redis.url, '--session-id', 'hint-left');
    each.started.push(first);
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length === 1, 'A running on the first worker');
    await waitFor(() => coordinator.stdoutSoFar().includes('[WORKERS] '), 'the run to count its workers');
    // The worker listened before the run's first look: no look ever found none.
    expect(coordinator.stdoutSoFar().split('\n').find((line) => line.startsWith('[WORKERS] '))).toBe("[WORKERS] 1 worker(s) take the session's jobs");
    expect(coordinator.stderrSoFar()).toContain('bullmq: tasks go to queue csv-wave-hint-left on ');
    expect(hints(coordinator.stderrSoFar())).toEqual([]);

    // The worker finishes A and leaves; B's job waits with no worker to take it.
    first.child.kill('SIGTERM');
    writeFileSync(join(each.marks, 'release'), '');
    expect((await first.exited).code).toBe(0);
    await waitFor(() => coordinator.stdoutSoFar().includes('[WORKERS] 0 worker(s)'), 'the run to see the worker gone');
    await waitFor(() => hints(coordinator.stderrSoFar()).length === 1, 'the run to say how to start workers');
    expect(hints(coordinator.stderrSoFar())[0]).toMatch(
      /^warning: bullmq: every worker of this session left; start workers with: csv-wave worker --redis URL --session-id hint-left /,
    );

    const second = await readyWorker(each.redis.url, '--session-id', 'hint-left');
    each.started.push(second);
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(dir).get('B')).toMatchObject({ status: 'completed', findings: 'done-B' });
    expect(hints(ran.stderr)).toHaveLength(1);
  });

  it('is said once to a run started with no worker, and not again once a worker came', { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'hint-none' });
    const coordinator = spawnCli('run', dir, '--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => hints(coordinator.stderrSoFar()).length === 1, 'the run to say how to start workers');
    expect(hints(coordinator.stderrSoFar())[0]).toMatch(
      /^warning: bullmq: no worker serves this session yet; start workers with: csv-wave worker --redis URL --session-id hint-none \(or without --session-id: every session\), with the same secret/,
    );
    const worker = await readyWorker(each.redis.url, '--session-id', 'hint-none');
    each.started.push(worker);
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(hints(ran.stderr)).toHaveLength(1);
  });
});
