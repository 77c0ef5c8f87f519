import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { jobIdSource, lines, readyWorker, redisForFile, waitingCommand } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

const redis = redisForFile();

/**
 * BullMQ gives a job whose worker died to another worker once (maxStalledCount 1); a job
 * whose workers die twice is failed by BullMQ, and csv-wave takes that as a worker crash:
 * its retry rules give the task one more attempt, a fresh job.
 */
describe.runIf(kRunRedisTests)('--backend bullmq: a job stalled twice', () => {
  it('fails as worker-crash, and the task runs again as its next attempt on another worker', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = buildSession([{ id: 'A', description: 'waits for release', role: 'worker' }], { sessionId: 'stall2-test' });
    const workers: SpawnedCli[] = [];
    const worker = async () => {
      const started = await readyWorker(redis.url, '--session-id', 'stall2-test', '--stalled-interval', '2');
      workers.push(started);
      return started;
    };
    const coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url);
    try {
      for (const runs of [1, 2]) {
        const doomed = await worker();
        await waitFor(() => lines(join(marks, 'A.pids')).length === runs, `run ${runs} of task A`);
        doomed.child.kill('SIGKILL');
        await doomed.exited;
      }
      const last = await worker();
      await waitFor(() => lines(join(marks, 'A.pids')).length >= 3, 'the next attempt');
      writeFileSync(join(marks, 'release'), '');
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
      last.child.kill('SIGTERM');
      const out = await last.exited;
      expect(out.stdout).toMatch(new RegExp(`\\[JOB\\] ${jobIdSource('stall2-test', 'A', 2)} completed`));
    } finally {
      writeFileSync(join(marks, 'release'), '');
      coordinator.child.kill('SIGKILL');
      for (const started of workers) started.child.kill('SIGKILL');
    }
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trim().split('\n')
      .map((line) => JSON.parse(line) as { task: string; attempt: number; outcome: string; error_class?: string; error?: string });
    expect(attempts.map((line) => [line.attempt, line.outcome, line.error_class])).toEqual([[1, 'retried', 'worker-crash'], [2, 'completed', '']]);
    expect(attempts[0]?.error).toMatch(/lost by its workers/);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
  });
});
