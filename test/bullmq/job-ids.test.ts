import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readJournal } from '../../src/session/journal.js';
import { lines, readyWorker, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

/** Every state a job can be in (BullMQ's keys of the queue). */
const kStateKeys = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;
const kFinishedKeys = ['completed', 'failed'] as const;

/**
 * A command that notes each of its runs in `<marks>/<id>.pids`, waits for `<marks>/release`,
 * and prints which run of the task it was: a stale reply shows as an old run's number.
 */
function countingCommand(marks: string): string {
  return `echo $$ >> ${marks}/{id}.pids; n=$(grep -c . ${marks}/{id}.pids); while [ ! -e ${marks}/release ]; do sleep 0.05; done; echo out-{id}-$n`;
}

/** The ids of every job of the queue, in any state. */
async function jobsOf(client: Redis, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (const key of kStateKeys) {
    const type = await client.type(`bull:${queue}:${key}`);
    ids.push(...(type === 'list' ? await client.lrange(`bull:${queue}:${key}`, 0, -1) : type === 'zset' ? await client.zrange(`bull:${queue}:${key}`, 0, -1) : []));
  }
  for (const key of kFinishedKeys) ids.push(...(await client.zrange(`bull:${queue}:${key}`, 0, -1)));
  return ids;
}

/** The id of the session's finished job of task `id`, found in Redis; undefined while there is none. */
async function finishedJob(client: Redis, id: string): Promise<string | undefined> {
  for (const key of await client.keys('bull:csv-wave-stale-test:stale-test.*')) {
    const job = key.slice('bull:csv-wave-stale-test:'.length);
    if (!job.endsWith(`.${id}.a1`)) continue;
    if ((await client.type(key)) === 'hash' && (await client.hget(key, 'finishedOn')) !== null) return job;
  }
  return undefined;
}

/**
 * Runs the session until task `id`'s reply has arrived and been journaled, and kills the
 * coordinator with kill -9 before it removes the job, as a coordinator killed in that window
 * does: stopped (SIGSTOP) while the worker finishes the job, then let go with Redis refusing
 * writes (CLIENT PAUSE WRITE), so that it reads the reply and journals it but cannot remove
 * the job; killed once the journal (or tasks.csv) holds the result. Returns the job's id.
 */
async function killRightAfterReply(dir: string, id: string, client: Redis, marks: string, args: string[]): Promise<string> {
  const coordinator = spawnCli('run', dir, ...args);
  try {
    await waitFor(() => lines(join(marks, `${id}.pids`)).length === 1, `${id} to start on the worker`);
    coordinator.child.kill('SIGSTOP');
    writeFileSync(join(marks, 'release'), '');
    let job: string | undefined;
    for (let look = 0; look < 12_000 && job === undefined; look++) {
      job = await finishedJob(client, id);
      if (job === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (job === undefined) throw new Error(`the worker did not finish ${id}`);
    await client.call('CLIENT', 'PAUSE', '600000', 'WRITE');
    coordinator.child.kill('SIGCONT');
    const accepted = () => readJournal(dir).some((entry) => entry.type === 'finish' && entry.id === id) || readRows(dir).get(id)?.status === 'completed';
    await waitFor(accepted, `the coordinator to journal ${id}'s reply`);
    coordinator.child.kill('SIGKILL');
    await coordinator.exited;
    return job;
  } finally {
    coordinator.child.kill('SIGCONT');
    coordinator.child.kill('SIGKILL');
    await client.call('CLIENT', 'UNPAUSE');
  }
}

describe.runIf(kRunRedisTests)('job ids never repeat across the runs of a session', () => {
  const each = redisForEachTest();

  it('after a coordinator kill -9 right after a reply arrived, `rerun --task X` runs X again and records the new output, not the old', { timeout: 600_000 }, async () => {
    const dir = buildSession([{ id: 'X', description: 'x', role: 'worker' }], { sessionId: 'stale-test' });
    const client = new Redis(each.redis.url);
    try {
      each.started.push(await readyWorker(each.redis.url, '--session-id', 'stale-test'));
      const args = ['--cmd', countingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url];
      const job = await killRightAfterReply(dir, 'X', client, each.marks, args);
      // The window was hit: the finished job, its reply inside, is still in Redis.
      expect(await client.hget(`bull:csv-wave-stale-test:${job}`, 'returnvalue')).toContain('out-X-1');

      const rerun = await spawnCli('rerun', dir, '--task', 'X', ...args).exited;
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(lines(join(each.marks, 'X.pids'))).toHaveLength(2);
      expect(readRows(dir).get('X')).toMatchObject({ status: 'completed', findings: 'out-X-2' });
      // Every reply was read: the session's queue holds no job.
      expect(await jobsOf(client, 'csv-wave-stale-test')).toEqual([]);
    } finally {
      client.disconnect();
    }
  });

  it('a finished job a killed run left unread expires a day after it finished, and the next run removes it: after a run the session\'s queue holds no job', { timeout: 600_000 }, async () => {
    const dir = buildSession([
      { id: 'X', description: 'x', role: 'worker' },
      { id: 'Y', description: 'y', role: 'worker', deps: 'X' },
    ], { sessionId: 'stale-test' });
    const client = new Redis(each.redis.url);
    try {
      each.started.push(await readyWorker(each.redis.url, '--session-id', 'stale-test'));
      const args = ['--cmd', countingCommand(each.marks), '--backend', 'bullmq', '--redis', each.redis.url];
      const job = await killRightAfterReply(dir, 'X', client, each.marks, args);
      expect(await client.exists(`bull:csv-wave-stale-test:${job}`)).toBe(1);
      // Were no run to come, nobody would read it: it leaves Redis a day after it finished, whatever else the queue does.: it leaves Redis a day after it finished, whatever else the queue does.
      let ttl = await client.pttl(`bull:csv-wave-stale-test:${job}`);
      for (let look = 0; look < 3000 && ttl < 0; look++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        ttl = await client.pttl(`bull:csv-wave-stale-test:${job}`);
      }
      expect(ttl).toBeGreaterThan(23 * 3600 * 1000);
      expect(ttl).toBeLessThanOrEqual(24 * 3600 * 1000);
      const resumed = await spawnCli('resume', dir, ...args).exited;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(readRows(dir).get('X')).toMatchObject({ status: 'completed', findings: 'out-X-1' });
      expect(readRows(dir).get('Y')).toMatchObject({ status: 'completed', findings: 'out-Y-1' });
      expect(lines(join(each.marks, 'X.pids'))).toHaveLength(1);
      expect(await jobsOf(client, 'csv-wave-stale-test')).toEqual([]);
      expect(await client.keys('bull:csv-wave-stale-test:stale-test.*')).toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});
