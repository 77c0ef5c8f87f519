import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, type RowInput } from '../helpers/session-builder.js';
import { fixturePath } from '../helpers/test-files.js';
import { redisForFile } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

const kWaves = 6;
const kPerWave = 50;

/** 300 tasks in 6 waves: each task after wave 1 depends on, and reads the findings of, two tasks of the wave before. */
function rows(): RowInput[] {
  const id = (wave: number, n: number) => `W${wave}-${String(n).padStart(2, '0')}`;
  const list: RowInput[] = [];
  for (let wave = 1; wave <= kWaves; wave++) {
    for (let n = 0; n < kPerWave; n++) {
      const before = wave === 1 ? '' : `${id(wave - 1, n)};${id(wave - 1, (n + 1) % kPerWave)}`;
      list.push({ id: id(wave, n), description: `task ${n} of wave ${wave}`, role: 'worker', deps: before, context_from: before });
    }
  }
  return list;
}

/** discoveries.ndjson without its timestamps, as a sorted list: tasks of one wave finish in any order, locally too. */
function board(dir: string): string[] {
  return readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.stringify({ ...JSON.parse(line), ts: '' }))
    .sort();
}

/** Every file under discoveries/ and artifacts/, by path, timestamps aside. */
function knowledgeFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(dir, 'discoveries'))) {
    files.set(`discoveries/${name}`, JSON.stringify({ ...JSON.parse(readFileSync(join(dir, 'discoveries', name), 'utf8')), timestamp: '' }));
  }
  for (const task of readdirSync(join(dir, 'artifacts'))) {
    for (const name of readdirSync(join(dir, 'artifacts', task))) {
      files.set(`artifacts/${task}/${name}`, readFileSync(join(dir, 'artifacts', task, name), 'utf8'));
    }
  }
  return files;
}

const redis = redisForFile();

describe.runIf(kRunRedisTests)('--backend bullmq', () => {
  // The limit is a safety net for a loaded box (load average 40 seen on 2 cores), not a measure.
  it('a 300-task session in 6 waves on 3 worker processes gives the files of a local run', { timeout: 600_000 }, async () => {
    const agent = fixturePath('bullmq-agent.mjs');
    const local = buildSession(rows());
    const remote = buildSession(rows());
    const localRun = await runCli('run', local, '--module', agent, '--concurrency', '8');
    expect(localRun.code, localRun.stderr).toBe(0);

    // The session's id, set before the run (the run keeps it), so that the workers are
    // listening when the first jobs come: each of the three gets its share.
    const sessionId = 'same-results-test';
    mkdirSync(join(remote, '.csv-wave'), { recursive: true });
    writeFileSync(join(remote, '.csv-wave', 'session-id'), `${sessionId}\n`);
    const workers: SpawnedCli[] = [1, 2, 3].map(() =>
      spawnCli('worker', '--redis', redis.url, '--session-id', sessionId, '--concurrency', '4'),
    );
    try {
      await waitFor(() => workers.every((worker) => worker.stdoutSoFar().includes('taking jobs')), 'three ready workers');
      const coordinator = spawnCli('run', remote, '--module', agent, '--concurrency', '12', '--backend', 'bullmq', '--redis', redis.url);
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      for (const worker of workers) worker.child.kill('SIGTERM');
    }
    const ended = await Promise.all(workers.map((worker) => worker.exited));
    expect(ended.map((end) => end.code)).toEqual([0, 0, 0]);

    // Each attempt ran once, on some worker; every worker took jobs.
    const jobs = ended.map((end) => end.stdout.split('\n').filter((line) => line.startsWith('[JOB] ')));
    expect(jobs.flat()).toHaveLength(kWaves * kPerWave);
    expect(new Set(jobs.flat().map((line) => line.split(' ')[1])).size).toBe(kWaves * kPerWave);
    expect(jobs.filter((lines) => lines.length > 0).length).toBeGreaterThanOrEqual(2);

    expect(readFileSync(join(remote, 'tasks.csv'), 'utf8')).toBe(readFileSync(join(local, 'tasks.csv'), 'utf8'));
    for (let wave = 1; wave <= kWaves; wave++) {
      expect(readFileSync(join(remote, `wave-${wave}.csv`), 'utf8'), `wave-${wave}.csv`).toBe(
        readFileSync(join(local, `wave-${wave}.csv`), 'utf8'),
      );
    }
    expect(board(remote)).toEqual(board(local));
    expect(board(local)).toHaveLength(kWaves * kPerWave);
    const remoteFiles = knowledgeFiles(remote);
    expect(remoteFiles.size).toBe(kWaves * kPerWave + (kWaves * kPerWave) / 10);
    expect(remoteFiles).toEqual(knowledgeFiles(local));
  });
});
