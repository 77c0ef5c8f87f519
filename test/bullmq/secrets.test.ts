import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { readRows } from '../helpers/session-builder.js';
import { redisForFile } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { dumpAll, filesUnder } from '../helpers/secret-scan.js';
import { kTestSecret } from '../helpers/test-secret.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/** A key no file, job or Redis value could hold by chance. */
const kApiKey = 'sk-bullmq-DO-NOT-STORE-5d1e7a93c2b4f806';

const redis = redisForFile();

describe.runIf(kRunRedisTests)('--backend bullmq and secrets', () => {
  let server: FakeOpenAiServer;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the openai executor on workers: the key, only in their environment, is in no job, Redis value or session file, nor the signing secret', { timeout: 600_000 }, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-bullmq-')), 'session');
    const init = await runCli('init', dir, '--template', 'brainstorm', '--mode', 'quick', '--topic', 'Quieter offices',
      '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl);
    expect(init.code, init.stderr).toBe(0);
    mkdirSync(join(dir, '.csv-wave'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'session-id'), 'secrets-test\n');

    // The coordinator has no key; its first wave waits in Redis, with no worker yet.
    const coordinator = spawnCliWith({ env: { OPENAI_API_KEY: '' } }, 'run', dir, '--backend', 'bullmq', '--redis', redis.url);
    let worker: SpawnedCli | undefined;
    try {
      await waitFor(() => coordinator.stderrSoFar().includes('start workers with'), 'the coordinator');
      let queued = await dumpAll(redis.url);
      // Jobs are added as the wave starts: look again until one is there (a safety net, not a measure).
      for (let look = 0; look < 600 && ![...queued.keys()].some((key) => key.endsWith('.IDEA-001.a1')); look++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        queued = await dumpAll(redis.url);
      }
      expect([...queued.keys()].some((key) => key.endsWith('.IDEA-001.a1'))).toBe(true);
      // The scan sees the texts of a job (its task's row), so it would see the key too.
      expect([...queued.values()].some((dump) => dump.includes('IDEA-001') && dump.includes('"description"'))).toBe(true);
      // Nor the secret that signs the jobs: it never goes through Redis.
      for (const [key, dump] of queued) expect(dump.includes(kApiKey) || dump.includes(kTestSecret), key).toBe(false);

      worker = spawnCliWith({ env: { OPENAI_API_KEY: kApiKey } }, 'worker', '--redis', redis.url, '--session-id', 'secrets-test', '--concurrency', '2',
        '--allow-base-url', server.baseUrl);
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout + ran.stderr).not.toContain(kApiKey);
    } finally {
      coordinator.child.kill('SIGKILL');
      worker?.child.kill('SIGTERM');
    }
    await worker!.exited;

    // The key reached the model server, from the worker.
    expect(server.requests.length).toBeGreaterThan(0);
    for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${kApiKey}`);
    expect(readRows(dir).get('SYNTH-001')?.status).toBe('completed');
    // Each request's tokens came back in its worker's reply: usage.ndjson has a line per request the server answered.
    const usage = usageLinesOf(dir);
    expect(usage).toHaveLength(server.requests.length);
    expect(usage.every((line) => line.prompt_tokens === 120)).toBe(true);
    // Redis after the run: the event stream holds every reply; no value holds the key.
    const after = await dumpAll(redis.url);
    expect(after.size).toBeGreaterThan(0);
    for (const [key, dump] of after) expect(dump.includes(kApiKey) || dump.includes(kTestSecret), key).toBe(false);
    for (const file of filesUnder(dir)) expect(readFileSync(file).includes(kApiKey) || readFileSync(file).includes(kTestSecret), file).toBe(false);
  });
});
