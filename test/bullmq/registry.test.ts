import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { SessionDirectory, SessionRegistration } from '../../src/backend/bullmq/session/session-registry.js';
import { Signing } from '../../src/backend/bullmq/trust/signing.js';
import { redisClientCount } from '../helpers/bullmq-jobs.js';
import { jobIdSource, kNoSecret, readyWorker, readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { fixturePath } from '../helpers/test-files.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCliWith, waitFor } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

const kRegistry = 'csv-wave:sessions';

/** A process whose clock runs `offMs` off (test/fixtures/clock-off.mjs, loaded into it and its children). */
function clockOff(offMs: number): { env: Record<string, string> } {
  return { env: { NODE_OPTIONS: `--import=${pathToFileURL(fixturePath('clock-off.mjs')).href}`, CSV_WAVE_TEST_CLOCK_OFF_MS: String(offMs) } };
}

/** Redis's clock in ms. */
async function redisNow(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * What an attacker with access to the Redis adds to the session registry: `count` ids that
 * look like sessions, beating (as far as their scores say) ten minutes from now, some with a
 * made-up signature, and a few that are no session ids at all.
 */
async function stuffRegistry(url: string, count: number): Promise<void> {
  const client = new Redis(url);
  try {
    const future = (await redisNow(client)) + 600_000;
    const pipeline = client.pipeline();
    for (let index = 0; index < count; index++) {
      const id = `fake-${String(index).padStart(3, '0')}`;
      pipeline.zadd(kRegistry, future, id);
      if (index % 2 === 0) pipeline.hset(`${kRegistry}:sig`, id, 'ab'.repeat(32));
    }
    for (const bad of ['a:b', '../up', 'x'.repeat(100), '']) pipeline.zadd(kRegistry, future, bad);
    await pipeline.exec();
  } finally {
    client.disconnect();
  }
}

describe.runIf(kRunRedisTests)('the session registry on a hostile or badly clocked Redis', () => {
  const each = redisForEachTest();

  it("a worker whose clock is 45 s ahead (and a coordinator's 45 s behind) still serves the session: the registry goes by Redis's clock", { timeout: 300_000 }, async () => {
    const worker = await readyWorkerWith(clockOff(45_000), each.redis.url);
    each.started.push(worker);
    const dir = buildSession(['A', 'B'].map((id) => ({ id, description: id, role: 'worker' })), { sessionId: 'clock' });
    const run = await spawnCliWith(clockOff(-45_000), 'run', dir, '--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', each.redis.url).exited;
    expect(run.code, run.stderr).toBe(0);
    for (const id of ['A', 'B']) expect(readRows(dir).get(id)?.findings).toBe(`done-${id}`);
    await waitFor(() => new RegExp(`\\[JOB\\] ${jobIdSource('clock', 'A', 1)} completed`).test(worker.stdoutSoFar()), "the worker's line");
  });

  it('400 fake ids in the registry: a worker with a secret serves none of them, opens no connection for them, and still serves a signed session', { timeout: 300_000 }, async () => {
    await stuffRegistry(each.redis.url, 400);
    const before = await redisClientCount(each.redis.url);
    const worker = await readyWorker(each.redis.url);
    each.started.push(worker);
    // The session it serves shows that it read the registry, the fakes with it.
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'real' });
    const run = await spawnCliWith({}, 'run', dir, '--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', each.redis.url).exited;
    expect(run.code, run.stderr).toBe(0);
    expect(readRows(dir).get('A')?.findings).toBe('done-A');
    // Its registry client, its cancel subscription and the session's three; nothing per fake id (the counting client is in both counts).
    const after = await redisClientCount(each.redis.url);
    expect(after - before).toBeLessThanOrEqual(6);
    await waitFor(() => worker.stdoutSoFar().includes('ignores 404 registration(s) in the session registry'), 'the worker to say it ignores the fakes');
    expect(worker.stdoutSoFar()).not.toContain('taking jobs of csv-wave-fake');
  });

  it('400 unsigned ids, to a worker with --insecure-no-secret: it serves --max-sessions of them (16), the most recently beaten first out; its connections stay bounded', { timeout: 300_000 }, async () => {
    await stuffRegistry(each.redis.url, 400);
    const before = await redisClientCount(each.redis.url);
    const worker = await readyWorkerWith(kNoSecret, each.redis.url, '--insecure-no-secret');
    each.started.push(worker);
    await waitFor(() => worker.stdoutSoFar().includes('serves the 16 most recently beaten of 400 running sessions (--max-sessions 16)'), 'the worker to serve 16');
    const served = (worker.stdoutSoFar().match(/taking jobs of csv-wave-fake-\d+/g) ?? []).length;
    expect(served).toBe(16);
    // Three connections a session (BullMQ's worker, its blocking connection, the queue), and the worker's own few.
    const after = await redisClientCount(each.redis.url);
    expect(after - before).toBeLessThanOrEqual(16 * 3 + 3);
    // The ids that are no session ids are not served, even here.
    expect(worker.stdoutSoFar()).toContain('ignores 4 registration(s)');

    // One beaten more recently than all of them: it is served, and the least recently beaten one is let go.
    const client = new Redis(each.redis.url);
    try {
      await client.zadd(kRegistry, (await redisNow(client)) + 700_000, 'fake-new');
    } finally {
      client.disconnect();
    }
    await waitFor(() => worker.stdoutSoFar().includes('taking jobs of csv-wave-fake-new'), 'the newest to be served');
    await waitFor(() => /csv-wave-fake-\d+ is left: 16 more recently beaten sessions run \(--max-sessions 16\)/.test(worker.stdoutSoFar()), 'one to be let go');
    expect((worker.stdoutSoFar().match(/taking jobs of csv-wave-fake-/g) ?? []).length).toBe(17);
  });

  it('a beat is signed over its session and its time: an old beat given a fresh score, or moved to another id, is not served', { timeout: 120_000 }, async () => {
    const signing = Signing.withSecret(kTestSecret);
    const registration = await SessionRegistration.start(each.redis.url, 'beating', signing, async () => undefined);
    const directory = new SessionDirectory(each.redis.url, signing, 16);
    const client = new Redis(each.redis.url);
    try {
      expect((await directory.running()).served).toEqual(['beating']);
      // Another secret's worker serves it not.
      const stranger = new SessionDirectory(each.redis.url, Signing.withSecret('s'.repeat(40)), 16);
      expect(await stranger.running()).toMatchObject({ served: [], unsigned: 1 });
      stranger.stop();
      const sig = await client.hget(`${kRegistry}:sig`, 'beating');
      const score = Number(await client.zscore(kRegistry, 'beating'));
      await client.zadd(kRegistry, score, 'copied');
      await client.hset(`${kRegistry}:sig`, 'copied', sig!);
      await client.zadd(kRegistry, score + 60_000, 'beating');
      expect(await directory.running()).toMatchObject({ served: [], unsigned: 2 });
    } finally {
      client.disconnect();
      directory.stop();
      await registration.stop(true);
    }
  });

  it('a beat on its way when the run stops lands before the session leaves: the session is not put back', { timeout: 120_000 }, async () => {
    const signing = Signing.withSecret(kTestSecret);
    // The second beat (the first of the timer's) is held in its renew until released.
    let renews = 0;
    let inSecondBeat!: () => void;
    const secondBeat = new Promise<void>((resolve) => (inSecondBeat = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const renew = async () => {
      if (++renews !== 2) return;
      inSecondBeat();
      await released;
    };
    const registration = await SessionRegistration.start(each.redis.url, 'stopping', signing, renew);
    const client = new Redis(each.redis.url);
    try {
      await secondBeat;
      let stopped = false;
      const stopping = registration.stop(true).then(() => (stopped = true));
      // Round trips on another connection: a stop that does not wait for the beat is done by now.
      for (let trip = 0; trip < 20; trip++) await client.ping();
      expect(stopped, 'stop waits for the beat on its way').toBe(false);
      release();
      await stopping;
      expect(await client.zscore(kRegistry, 'stopping')).toBeNull();
      expect(await client.get('csv-wave:sessions:left:stopping')).toBe('1');
      expect(renews, 'no beat after stop').toBe(2);
    } finally {
      release();
      client.disconnect();
    }
  });
});
