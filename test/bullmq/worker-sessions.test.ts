import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { jobIdSource, readyWorker, redisForFile } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/spawn-cli.js';

const redis = redisForFile();

describe.runIf(kRunRedisTests)('csv-wave worker without --session-id', () => {
  it('serves every running session, those started after it too, and lets a finished one go', { timeout: 600_000 }, async () => {
    // Started before any session runs: it finds them as their coordinators start.
    const worker = await readyWorker(redis.url, '--concurrency', '2');
    const registry = new Redis(redis.url);
    try {
      for (const sessionId of ['first-session', 'second-session']) {
        const dir = buildSession(['A', 'B', 'C'].map((id) => ({ id, description: id, role: 'worker' })), { sessionId });
        const run = await runCli('run', dir, '--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', redis.url);
        expect(run.code, run.stderr).toBe(0);
        // Its coordinator left the set of running sessions as it closed (not only by ceasing to beat).
        expect(await registry.zscore('csv-wave:sessions', sessionId)).toBeNull();
        for (const id of ['A', 'B', 'C']) expect(readRows(dir).get(id)).toMatchObject({ status: 'completed', findings: `done-${id}` });
        // A worker writes its [JOB] lines together, up to 50 ms after the job.
        const line = new RegExp(`\\[JOB\\] ${jobIdSource(sessionId, 'A', 1)} completed`);
        await waitFor(() => line.test(worker.stdoutSoFar()), `the worker's line for ${sessionId}.A`);
        // Its coordinator left: the worker stops listening to its queue.
        await waitFor(() => worker.stdoutSoFar().includes(`csv-wave-${sessionId} has no coordinator any more`), 'the worker to let the session go');
      }
    } finally {
      registry.disconnect();
      worker.child.kill('SIGTERM');
    }
    const ended = await worker.exited;
    expect(ended.code, ended.stderr).toBe(0);
  });

  it('a bad --session-id is exit 2, naming the flag', async () => {
    const run = await runCli('worker', '--redis', redis.url, '--session-id', 'a:b');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Expected `--session-id` to be a session id');
  });
});
