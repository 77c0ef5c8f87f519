import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { jobIdIn, jobIdSource, lines, readyWorker, redisForFile, waitingCommand } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { isRunning, spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

const redis = redisForFile();

describe.runIf(kRunRedisTests)('csv-wave worker: Ctrl-C on the coordinator', () => {
  it('ends the jobs workers run after the grace: their commands are gone, the tasks pending, the jobs out of Redis', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = buildSession([
      { id: 'A', description: 'waits', role: 'worker' },
      { id: 'B', description: 'waits', role: 'worker' },
    ], { sessionId: 'cancel-test' });
    const worker = await readyWorker(redis.url, '--session-id', 'cancel-test', '--concurrency', '2');
    const client = new Redis(redis.url);
    let coordinator: SpawnedCli | undefined;
    try {
      coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--concurrency', '2', '--grace', '1', '--backend', 'bullmq', '--redis', redis.url);
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1 && lines(join(marks, 'B.pids')).length === 1, 'both commands running');
      const pids = [...lines(join(marks, 'A.pids')), ...lines(join(marks, 'B.pids'))].map(Number);
      coordinator.child.kill('SIGINT');
      const ended = await coordinator.exited;
      expect(ended.code, ended.stderr).toBe(130);
      await waitFor(() => pids.every((pid) => !isRunning(pid)), 'the commands to end');
      const cancelled = (id: string) => new RegExp(`\\[JOB\\] ${jobIdSource('cancel-test', id, 1)} cancelled`).test(worker.stdoutSoFar());
      await waitFor(() => cancelled('A') && cancelled('B'), 'the worker to cancel both jobs');
      // Removed, so that a resume adds the attempts' jobs again instead of taking their cancel for an outcome.
      for (const id of ['A', 'B']) {
        let kept = 1;
        for (let look = 0; look < 600 && kept === 1; look++) {
          kept = await client.exists(`bull:csv-wave-cancel-test:${jobIdIn(worker.stdoutSoFar(), 'cancel-test', id, 1)}`);
          if (kept === 1) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(kept, id).toBe(0);
      }
      for (const row of readRows(dir).values()) expect(row.status).toBe('pending');
      // The worker goes on serving: a resume runs both tasks again, to their end.
      writeFileSync(join(marks, 'release'), '');
      const resumed = await spawnCli('resume', dir, '--cmd', waitingCommand(marks), '--backend', 'bullmq', '--redis', redis.url).exited;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });
      expect(lines(join(marks, 'A.pids'))).toHaveLength(2);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      coordinator?.child.kill('SIGKILL');
      worker.child.kill('SIGTERM');
      client.disconnect();
    }
    await worker.exited;
  });
});
