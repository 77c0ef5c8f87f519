import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRate } from '../../src/option-table.js';
import { jobIdSource, readyWorker, redisForFile } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/** One event of a queue's event stream: its Redis time (the stream id's milliseconds) and fields. */
interface QueueEvent {
  ms: number;
  event: string;
  jobId: string;
}

/**
 * The queue's events as Redis stamped them. A job's `active` event is written by the very
 * script that counts it against the rate limit, with the same clock that expires the
 * limit's window: the start times BullMQ's limiter sees.
 */
async function queueEvents(url: string, queue: string): Promise<QueueEvent[]> {
  const client = new Redis(url);
  try {
    const entries = await client.xrange(`bull:${queue}:events`, '-', '+');
    return entries.map(([id, fields]) => {
      const field = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
      return { ms: Number(id.split('-')[0]), event: field('event'), jobId: field('jobId') };
    });
  } finally {
    client.disconnect();
  }
}

/**
 * BullMQ's limiter is a fixed window: the first start after a window ended opens the next
 * one, `durationMs` long, and at most `max` starts fall in it. The stream stamps are not
 * the limiter's own clock: Redis 7.0 stamps an event when the XADD runs, while the
 * window's key expires by the time its script began, and a loaded box can pause Redis in
 * between. So the checks leave `slackMs` of room at each edge and use only what the rule
 * implies whatever the windows' phase: an interval shorter than one window meets at most
 * two windows (at most 2 × max starts), and N starts need ceil(N / max) windows, opened at
 * least `durationMs` apart.
 */
function limiterBreaches(starts: readonly number[], rule: { max: number; durationMs: number }, slackMs: number): string[] {
  const sorted = [...starts].sort((a, b) => a - b);
  const breaches: string[] = [];
  let end = 0;
  for (let begin = 0; begin < sorted.length; begin++) {
    while (end < sorted.length && sorted[end]! < sorted[begin]! + rule.durationMs - slackMs) end++;
    if (end - begin > 2 * rule.max) breaches.push(`${end - begin} starts within ${rule.durationMs - slackMs} ms from ${sorted[begin]}`);
  }
  const windows = Math.ceil(sorted.length / rule.max);
  const span = sorted.at(-1)! - sorted[0]!;
  if (span < (windows - 1) * rule.durationMs - slackMs) breaches.push(`${sorted.length} starts within ${span} ms: ${windows} windows need ${(windows - 1) * rule.durationMs} ms`);
  return breaches;
}

describe.runIf(kRunRedisTests)('csv-wave worker: shared rate limit', () => {
  const redis = redisForFile();
  let server: FakeOpenAiServer;
  const workers: SpawnedCli[] = [];
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await server?.close();
  });

  it('--rate 20/s over 3 workers: the 200 starts spread over 10 windows of BullMQ\'s limiter, shared by the workers', { timeout: 600_000 }, async () => {
    const rows = Array.from({ length: 200 }, (_, index) => ({ id: `T${index}`, description: 'x', role: 'worker' }));
    const dir = buildSession(rows, { sessionId: 'rate-test' });
    for (let index = 0; index < 3; index++) workers.push(await readyWorker(redis.url, '--session-id', 'rate-test', '--concurrency', '8'));
    const run = await runCli('run', dir, '--cmd', 'echo ok-{id}', '--concurrency', '64', '--backend', 'bullmq', '--redis', redis.url, '--rate', '20/s');
    expect(run.code, run.stderr).toBe(0);
    expect([...readRows(dir).values()].every((row) => row.status === 'completed')).toBe(true);
    const starts = (await queueEvents(redis.url, 'csv-wave-rate-test')).filter((event) => event.event === 'active').map((event) => event.ms);
    expect(starts).toHaveLength(200);
    // 200 starts at 20 a window need 10 windows, so 9 s at least, and no second holds more than two windows' worth.
    expect(limiterBreaches(starts, { max: 20, durationMs: 1000 }, 200)).toEqual([]);
    // Every worker took some: the limit is the queue's, shared, not each worker's own.
    // (A worker writes its [JOB] lines together, up to 50 ms after its jobs.)
    await waitFor(() => workers.every((worker) => worker.stdoutSoFar().includes('[JOB] rate-test.')), 'a [JOB] line from every worker');
  });

  it('a 429 with Retry-After on one worker pauses the whole queue for that long', { timeout: 600_000 }, async () => {
    // R is answered 429 with retry-after-ms 1500; the X tasks are answered at once.
    const rows = [
      { id: 'R', description: 'limited [[fake:rate-limit-ms]]', role: 'worker', priority: 'P0' },
      ...Array.from({ length: 30 }, (_, index) => ({ id: `X${index}`, description: 'fine', role: 'worker' })),
    ];
    const dir = buildSession(rows);
    mkdirSync(join(dir, '.csv-wave'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'session-id'), 'pause-test\n');
    const env = { env: { OPENAI_API_KEY: 'sk-test' } };
    for (let index = 0; index < 2; index++) {
      const worker = spawnCliWith(env, 'worker', '--redis', redis.url, '--session-id', 'pause-test', '--concurrency', '1', '--allow-base-url', server.baseUrl);
      workers.push(worker);
    }
    const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--retries', '0',
      '--concurrency', '31', '--backend', 'bullmq', '--redis', redis.url);
    expect(run.code, run.stderr).toBe(1);
    expect(readRows(dir).get('R')?.status).toBe('failed');
    const events = await queueEvents(redis.url, 'csv-wave-pause-test');
    const rJob = new RegExp(`^${jobIdSource('pause-test', 'R', 1)}$`);
    const rStarted = events.find((event) => event.event === 'active' && rJob.test(event.jobId))!.ms;
    // The pause is set after R's 429 (so after R started) and before R's job ends.
    const rEnded = events.find((event) => rJob.test(event.jobId) && (event.event === 'completed' || event.event === 'failed'))!.ms;
    const laterStarts = events.filter((event) => event.event === 'active' && event.ms > rEnded).map((event) => event.ms);
    expect(laterStarts.length).toBeGreaterThan(0);
    // No job started on either worker before the Retry-After had passed.
    expect(Math.min(...laterStarts)).toBeGreaterThanOrEqual(rStarted + 1500);
  });
});

describe('--rate', () => {
  it('the limiter check passes a fixed-window limiter with late stamps and fails a limiter per worker', () => {
    const rule = { max: 20, durationMs: 1000 };
    // Windows opening 1000-1100 ms apart, 20 starts each, every stamp up to 150 ms late.
    const held = Array.from({ length: 200 }, (_, index) => Math.floor(index / 20) * 1050 + (index % 20) * 40 + ((index * 37) % 150));
    expect(limiterBreaches(held, rule, 200)).toEqual([]);
    // Three workers limited on their own: 60 starts a second.
    const perWorker = Array.from({ length: 200 }, (_, index) => Math.floor(index / 60) * 1000 + (index % 60) * 15);
    expect(limiterBreaches(perWorker, rule, 200).length).toBeGreaterThan(0);
    // No limit at all: a burst.
    expect(limiterBreaches(Array.from({ length: 200 }, (_, index) => index * 5), rule, 200).length).toBeGreaterThan(0);
  });

  it('reads N/s and N/min', () => {
    expect(parseRate('20/s', '--rate')).toEqual({ max: 20, durationMs: 1000 });
    expect(parseRate('600/min', '--rate')).toEqual({ max: 600, durationMs: 60_000 });
  });

  it.each(['0/s', '20', '20/h', '-1/s', '1.5/s', 'x/s', ''])('refuses `%s` with exit 2, naming the flag', async (value) => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    const run = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', 'redis://127.0.0.1:1', '--rate', value);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Expected `--rate` to be attempts per second or per minute, as 20/s or 600/min');
    expect(readRows(dir).get('A')?.status).not.toBe('completed');
  });

  it('goes with --backend bullmq only', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    const run = await runCli('run', dir, '--cmd', 'echo x', '--rate', '5/s');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--rate goes with --backend bullmq');
  });

  it('a bad backend.rate in session.json is exit 2, naming it', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], {
      session: JSON.stringify({ pipeline: 'generic', backend: { type: 'bullmq', url: 'redis://127.0.0.1:1', rate: 'fast' } }),
    });
    const run = await runCli('run', dir, '--cmd', 'echo x');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('session.json: backend.rate: Expected `rate` to be attempts per second or per minute');
  });
});
