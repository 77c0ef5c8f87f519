import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobIdSource, lines, redisForEachTest, waitingCommand } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { isRunning, spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/** A worker with a short stalled-job check, ready to take jobs. */
async function readyWorker(url: string, sessionId: string): Promise<SpawnedCli> {
  const worker = spawnCli('worker', '--redis', url, '--session-id', sessionId, '--stalled-interval', '2');
  await waitFor(() => worker.stdoutSoFar().includes('taking jobs'), 'a ready worker');
  return worker;
}

/**
 * A worker killed with kill -9 cannot end its commands itself; its launcher process sees
 * its parent gone and ends them, so that they do not run on beside the job's second run
 * on another worker.
 */
describe.runIf(kRunRedisTests)('csv-wave worker killed with kill -9', () => {
  const each = redisForEachTest();

  it('its running command is killed without waiting for its end, and the task finishes once on another worker', { timeout: 600_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'waits for release', role: 'worker' }], { sessionId: 'orphan-test' });
    const first = await readyWorker(each.redis.url, 'orphan-test');
    each.started.push(first);
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length === 1, 'the command running on the first worker');
    const pid = Number(lines(join(each.marks, 'A.pids'))[0]);
    expect(isRunning(pid)).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;
    // The command waits for a release that has not come: only a kill ends it.
    await waitFor(() => !isRunning(pid), 'the dead worker\'s command to be killed');
    const second = await readyWorker(each.redis.url, 'orphan-test');
    each.started.push(second);
    await waitFor(() => lines(join(each.marks, 'A.pids')).length === 2, 'the task started again on the second worker');
    writeFileSync(join(each.marks, 'release'), '');
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    second.child.kill('SIGTERM');
    const secondOut = await second.exited;
    expect(secondOut.stdout).toMatch(new RegExp(`\\[JOB\\] ${jobIdSource('orphan-test', 'A', 1)} completed`));
    expect(lines(join(each.marks, 'A.pids'))).toHaveLength(2);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
    const attempts = lines(join(dir, 'attempts.ndjson')).map((line) => JSON.parse(line) as { task: string; outcome: string });
    expect(attempts.filter((attempt) => attempt.task === 'A')).toEqual([expect.objectContaining({ outcome: 'completed' })]);
  });
});
