import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookUpJobs } from '../../src/backend/bullmq/jobs/job-lookup.js';
import { bytesPast, jsonStringBytes, maxReplyBytes } from '../../src/backend/bullmq/trust/reply-size.js';
import { redisForFile } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';

const kMiB = 1024 * 1024;

describe('the size of a reply', () => {
  it('is counted as BullMQ stores it, the JSON of its text in UTF-8, without making that JSON', () => {
    const unit = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\x1b', '\0', '\ud800', '\udc00', '\u2028', '\x7f'));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 20 }), (parts) => {
        const text = parts.join('');
        expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it('is limited by the run caps: 4 × (artifact bytes + stdout bytes) + 1 MiB', () => {
    expect(maxReplyBytes({})).toBe(45 * kMiB);
    expect(maxReplyBytes({ maxArtifactBytes: 2 * kMiB, maxStdoutBytes: 64 * 1024 })).toBe(4 * (2 * kMiB + 64 * 1024) + kMiB);
  });

  it('past its limit is said exactly; within it, nothing is counted that needs no count', () => {
    expect(bytesPast('x'.repeat(100), 1000)).toBeUndefined();
    expect(bytesPast('"'.repeat(400), 1000)).toBeUndefined();
    expect(bytesPast('"'.repeat(500), 1000)).toBe(1002);
    expect(bytesPast('\0'.repeat(200), 1000)).toBe(1202);
    expect(bytesPast({ kind: 'x'.repeat(2000) }, 1000)).toBe(2011);
  });
});

describe.runIf(kRunRedisTests)("a look-up of jobs in Redis", () => {
  const server = redisForFile();
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(server.url);
  });
  afterAll(() => {
    redis?.disconnect();
  });

  it('reads a return value within the limit, only the size of one past it, the start of a long failed reason', async () => {
    const big = JSON.stringify('x'.repeat(5 * kMiB));
    await redis.hset('job:small', { timestamp: '1', finishedOn: '2', returnvalue: JSON.stringify('{"kind":"finished"}') });
    await redis.hset('job:big', { timestamp: '1', finishedOn: '2', returnvalue: big });
    // Unfinished jobs whose hashes someone filled: nothing of them is read.
    await redis.hset('job:waiting', { timestamp: '1', returnvalue: big });
    await redis.hset('job:running', { timestamp: '1', processedOn: '2', returnvalue: big });
    await redis.hset('job:failed', { timestamp: '1', finishedOn: '2', failedReason: 'r'.repeat(200_000) });
    const before = Number(/total_net_output_bytes:(\d+)/.exec(await redis.info('stats'))?.[1]);
    const states = await lookUpJobs(redis, (id) => `job:${id}`, ['small', 'big', 'waiting', 'running', 'failed', 'none'], () => kMiB);
    const sent = Number(/total_net_output_bytes:(\d+)/.exec(await redis.info('stats'))?.[1]) - before;
    expect(states.get('small')).toEqual({ kind: 'completed', returnvalue: '{"kind":"finished"}' });
    expect(states.get('big')).toEqual({ kind: 'oversized', bytes: Buffer.byteLength(big) });
    expect(states.get('waiting')).toEqual({ kind: 'waiting' });
    expect(states.get('running')).toEqual({ kind: 'taken' });
    expect(states.get('failed')).toEqual({ kind: 'failed', reason: 'r'.repeat(64 * 1024) });
    expect(states.get('none')).toEqual({ kind: 'missing' });
    // Redis sent the small value, the reason's start and the INFO replies: not the 5 MiB values.
    expect(sent).toBeLessThan(200_000);
  });
});
