import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { FinishedJobs, kKeepFinishedMs, removeReadJobs } from '../../src/backend/bullmq/jobs/finished-jobs.js';
import { redisForFile } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';

const redis = redisForFile();
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A queue with jobs `done` (completed), `broken` (failed) and `queued` (waiting): the first two run by a worker that then stops. */
async function queueOfThree(name: string): Promise<{ queue: Queue; client: Redis }> {
  const queue = new Queue(name, { connection: { url: redis.url } });
  const client = new Redis(redis.url);
  closers.push(() => queue.close(), () => client.quit());
  await queue.addBulk([
    { name: 'attempt', data: { n: 1 }, opts: { jobId: 'done' } },
    { name: 'attempt', data: { n: 2 }, opts: { jobId: 'broken' } },
  ]);
  const worker = new Worker(
    name,
    async (job) => {
      if (job.id === 'broken') throw new Error('it broke');
      return 'ok';
    },
    { connection: { url: redis.url, maxRetriesPerRequest: null } },
  );
  const finished = new Set<string>();
  await new Promise<void>((resolve) => {
    const seen = (id: string | undefined) => {
      if (id) finished.add(id);
      if (finished.size === 2) resolve();
    };
    worker.on('completed', (job) => seen(job.id));
    worker.on('failed', (job) => seen(job?.id));
  });
  await worker.close();
  await queue.add('attempt', { n: 3 }, { jobId: 'queued' });
  return { queue, client };
}

describe.runIf(kRunRedisTests)('finished jobs', () => {
  it('read replies are removed in one script: the completed and failed jobs with their keys, a waiting one by BullMQ\'s removal', async () => {
    const { queue, client } = await queueOfThree('csv-wave-finished-remove');
    expect(await client.exists(queue.toKey('done'), queue.toKey('broken'), queue.toKey('queued'))).toBe(3);
    await removeReadJobs(client, queue, ['done', 'broken', 'queued', 'never-added']);
    expect(await client.exists(queue.toKey('done'), queue.toKey('broken'), queue.toKey('queued'))).toBe(0);
    expect(await client.zcard(queue.toKey('completed'))).toBe(0);
    expect(await client.zcard(queue.toKey('failed'))).toBe(0);
    expect(await client.llen(queue.toKey('wait'))).toBe(0);
    // A second removal of the same ids finds nothing and fails nothing.
    await removeReadJobs(client, queue, ['done', 'queued']);
  });

  it('a worker\'s finished jobs expire a day from the write that gathers them, with the finished sets and the event stream', async () => {
    const { queue, client } = await queueOfThree('csv-wave-finished-expire');
    const finished = new FinishedJobs(queue);
    finished.add('done');
    finished.add('broken');
    // Nothing is sent before the gathered write.
    expect(await client.pttl(queue.toKey('done'))).toBe(-1);
    await finished.flush();
    for (const key of ['done', 'broken', 'completed', 'failed', 'events']) {
      const ttl = await client.pttl(queue.toKey(key));
      expect(ttl, key).toBeGreaterThan(kKeepFinishedMs - 3_600_000);
      expect(ttl, key).toBeLessThanOrEqual(kKeepFinishedMs);
    }
    // The waiting job is not one of them.
    expect(await client.pttl(queue.toKey('queued'))).toBe(-1);
    // Dropped (a worker stopping at once): what was gathered is never sent.
    await client.persist(queue.toKey('done'));
    finished.add('done');
    finished.drop();
    await finished.flush();
    expect(await client.pttl(queue.toKey('done'))).toBe(-1);
  });
});
