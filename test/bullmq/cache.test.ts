import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { jobIdSource, lines, readyWorker, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli } from '../helpers/spawn-cli.js';

// Issue 25 item 2: with --backend bullmq the coordinator looks in the cache before it adds a
// job: a task answered from the cache is never a job, and workers need no cache.

/** The tasks of the jobs added to the session's queue, in order, from its events stream. */
async function addedJobs(client: Redis, sessionId: string): Promise<string[]> {
  const job = new RegExp(`^${jobIdSource(sessionId, /(\w+)/, /\d+/)}$`);
  const events = (await client.xrange(`bull:csv-wave-${sessionId}:events`, '-', '+')) as [string, string[]][];
  const tasks: string[] = [];
  for (const [, fields] of events) {
    const event = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) event.set(fields[i]!, fields[i + 1]!);
    if (event.get('event') !== 'added') continue;
    const match = job.exec(event.get('jobId') ?? '');
    if (match) tasks.push(match[1]!);
  }
  return tasks;
}

describe.runIf(kRunRedisTests)('--backend bullmq and the result cache', () => {
  const each = redisForEachTest();

  it('rerun --task A: A is a job again; B and C, whose inputs are unchanged, come from the cache without a job', { timeout: 600_000 }, async () => {
    const dir = buildSession(
      [
        { id: 'A', description: 'a', role: 'worker' },
        { id: 'B', description: 'b', role: 'worker', deps: 'A', context_from: 'A' },
        { id: 'C', description: 'c', role: 'worker', deps: 'B', context_from: 'B' },
      ],
      { sessionId: 'cache-test' },
    );
    const log = join(each.marks, 'runs.log');
    const client = new Redis(each.redis.url);
    try {
      each.started.push(await readyWorker(each.redis.url, '--session-id', 'cache-test'));
      const args = ['--cmd', `echo {id} >> ${log}; echo done-{id}`, '--backend', 'bullmq', '--redis', each.redis.url];
      const first = await spawnCli('run', dir, ...args).exited;
      expect(first.code, first.stderr).toBe(0);
      expect(await addedJobs(client, 'cache-test')).toEqual(['A', 'B', 'C']);

      const rerun = await spawnCli('rerun', dir, '--task', 'A', ...args).exited;
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(rerun.stdout).toMatch(/^\[CACHED\] B /m);
      expect(rerun.stdout).toMatch(/^\[CACHED\] C /m);
      expect(await addedJobs(client, 'cache-test')).toEqual(['A', 'B', 'C', 'A']);
      expect(lines(log).sort()).toEqual(['A', 'A', 'B', 'C']);
      expect(readRows(dir).get('C')).toMatchObject({ status: 'completed', findings: 'done-C' });
    } finally {
      client.disconnect();
    }
  });
});
