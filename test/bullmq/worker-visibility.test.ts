import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSession } from '../helpers/session-builder.js';
import { lines, readyWorker, redisForFile, waitingCommand } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

const redis = redisForFile();

describe.runIf(kRunRedisTests)('csv-wave worker: who runs what', () => {
  it('status names the worker (host, pid) of each running task; the run shows the connected workers', { timeout: 600_000 }, async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = buildSession([
      { id: 'A', description: 'waits', role: 'worker' },
      { id: 'B', description: 'waits', role: 'worker' },
    ], { sessionId: 'visible-test' });
    const workers = [
      await readyWorker(redis.url, '--session-id', 'visible-test'),
      await readyWorker(redis.url, '--session-id', 'visible-test'),
    ];
    let coordinator: SpawnedCli | undefined;
    try {
      coordinator = spawnCli('run', dir, '--cmd', waitingCommand(marks), '--concurrency', '2', '--backend', 'bullmq', '--redis', redis.url);
      await waitFor(() => lines(join(marks, 'A.pids')).length === 1 && lines(join(marks, 'B.pids')).length === 1, 'both tasks running');
      await waitFor(() => coordinator!.stdoutSoFar().includes('[WORKERS] 2 worker(s)'), 'the run to count two workers');

      const status = await runCli('status', dir, '--redis', redis.url);
      expect(status.code, status.stderr).toBe(0);
      const shown = (id: string) => status.stdout.split('\n').find((line) => line.startsWith('[RUN]') && line.includes(` ${id} `)) ?? '';
      const places = workers.map((worker) => `running on host ${hostname()} pid ${worker.child.pid}`);
      // Each worker (concurrency 1) runs one of the two tasks.
      expect(places).toContain(shown('A').split('-> ')[1]);
      expect(places).toContain(shown('B').split('-> ')[1]);
      expect(shown('A').split('-> ')[1]).not.toBe(shown('B').split('-> ')[1]);

      const json = await runCli('status', dir, '--json', '--redis', redis.url);
      const report = JSON.parse(json.stdout) as { workers?: Record<string, string> };
      expect(Object.keys(report.workers ?? {}).sort()).toEqual(['A', 'B']);

      writeFileSync(join(marks, 'release'), '');
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      writeFileSync(join(marks, 'release'), '');
      coordinator?.child.kill('SIGKILL');
      for (const worker of workers) worker.child.kill('SIGTERM');
    }
    await Promise.all(workers.map((worker) => worker.exited));
  });
});
