import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addByHand, handMadeRequest, jobData, jobOutcome, startRecordingServer } from '../helpers/bullmq-jobs.js';
import { jobIdSource, kNoSecret, readyWorker, readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, spawnCliWith, waitFor } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

const kOtherSecret = 'another-secret-fedcba9876543210fedcba9876543210';
/** A key no request may carry to a server the worker does not allow. */
const kApiKey = 'sk-worker-key-NEVER-TO-ATTACKER-0b1c2d3e';

describe.runIf(kRunRedisTests)('a worker runs only what a coordinator signed', () => {
  const each = redisForEachTest();

  it('a job added by hand with plain BullMQ (unsigned, signed with another secret, or signed for another job) is not run: the worker says it refused it, and the job fails with the reason', { timeout: 300_000 }, async () => {
    const queue = 'csv-wave-hand';
    const worker = await readyWorker(each.redis.url, '--session-id', 'hand');
    each.started.push(worker);
    const command = (name: string) => handMadeRequest(name, { type: 'command', template: `id > ${join(each.marks, name)}` });
    // In the order a worker with concurrency 1 takes them; the last one, rightly signed, shows that a job that passes runs.
    await addByHand(each.redis.url, queue, 'hand.U.a1', jobData(command('U'), queue, 'hand.U.a1'));
    await addByHand(each.redis.url, queue, 'hand.W.a1', jobData(command('W'), queue, 'hand.W.a1', kOtherSecret));
    // A signature made for job hand.X.a1, carried by another job: it covers the job id.
    await addByHand(each.redis.url, queue, 'hand.M.a1', jobData(command('M'), queue, 'hand.X.a1', kTestSecret));
    // A signed request whose command was changed afterwards: the signature covers the request's digest.
    await addByHand(each.redis.url, queue, 'hand.C.a1', { ...jobData(command('C'), queue, 'hand.C.a1', kTestSecret), request: command('C2') });
    await addByHand(each.redis.url, queue, 'hand.S.a1', jobData(command('S'), queue, 'hand.S.a1', kTestSecret));

    await waitFor(() => existsSync(join(each.marks, 'S')), 'the signed job to run');
    await waitFor(() => worker.stdoutSoFar().includes('[JOB] hand.S.a1 completed'), "the signed job's line");
    const log = worker.stdoutSoFar();
    for (const name of ['U', 'W', 'M', 'C', 'C2']) expect(existsSync(join(each.marks, name)), name).toBe(false);
    expect(log).toMatch(/\[JOB\] hand\.U\.a1 refused: it is not signed/);
    expect(log).toMatch(/\[JOB\] hand\.W\.a1 refused: its signature does not verify/);
    expect(log).toMatch(/\[JOB\] hand\.M\.a1 refused: its signature does not verify/);
    expect(log).toMatch(/\[JOB\] hand\.C\.a1 refused: its signature does not verify/);
    for (const id of ['hand.U.a1', 'hand.W.a1', 'hand.M.a1', 'hand.C.a1']) {
      const outcome = await jobOutcome(each.redis.url, queue, id);
      expect(outcome.state, id).toBe('failed');
      expect(outcome.failedReason, id).toMatch(/^csv-wave: refused by worker [^:]+:\d+: /);
    }
  });

  it('a worker with --insecure-no-secret runs unsigned jobs (its choice, said when it starts)', { timeout: 300_000 }, async () => {
    const queue = 'csv-wave-open';
    const worker = await readyWorkerWith(kNoSecret, each.redis.url, '--session-id', 'open', '--insecure-no-secret');
    each.started.push(worker);
    expect(worker.stdoutSoFar()).toContain('unsigned too (--insecure-no-secret');
    await addByHand(each.redis.url, queue, 'open.U.a1', jobData(handMadeRequest('U', { type: 'command', template: `id > ${join(each.marks, 'U')}` }), queue, 'open.U.a1'));
    await waitFor(() => existsSync(join(each.marks, 'U')), 'the unsigned job to run');
  });

  it('--executors: a job of an executor the worker does not offer is refused, signed or not; the coordinator shows why', { timeout: 300_000 }, async () => {
    const worker = await readyWorker(each.redis.url, '--session-id', 'narrow', '--executors', 'module,openai');
    each.started.push(worker);
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'narrow' });
    const run = await spawnCli('run', dir, '--cmd', `id > ${join(each.marks, 'A')}`, '--backend', 'bullmq', '--redis', each.redis.url).exited;
    expect(run.code, run.stderr).toBe(1);
    expect(existsSync(join(each.marks, 'A'))).toBe(false);
    const row = readRows(dir).get('A');
    expect(row?.status).toBe('failed');
    expect(row?.error).toMatch(/^Refused by worker host \S+ pid \d+: its executor command is not one this worker runs \(--executors module,openai\)/);
    await waitFor(() => new RegExp(`\\[JOB\\] ${jobIdSource('narrow', 'A', 1)} refused: its executor command`).test(worker.stdoutSoFar()), "the worker's line");
  });

  it("an openai job never sends the worker's key to a model server it does not allow, signed or not", { timeout: 300_000 }, async () => {
    const attacker = await startRecordingServer();
    try {
      const env = { env: { OPENAI_API_KEY: kApiKey, OPENAI_BASE_URL: undefined } };
      const worker = spawnCliWith(env, 'worker', '--redis', each.redis.url, '--session-id', 'model');
      each.started.push(worker);
      await waitFor(() => worker.stdoutSoFar().includes('taking jobs'), 'a ready worker');
      // Unsigned, by hand.
      const queue = 'csv-wave-model';
      await addByHand(each.redis.url, queue, 'model.H.a1', jobData(handMadeRequest('H', { type: 'openai', model: 'm', baseUrl: attacker.baseUrl }), queue, 'model.H.a1'));
      // Signed, by a coordinator with the secret that names that server: the worker still does not send its key there.
      const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'model' });
      const run = await spawnCliWith({ env: { OPENAI_API_KEY: undefined } }, 'run', dir, '--executor', 'openai', '--model', 'm', '--base-url', attacker.baseUrl,
        '--backend', 'bullmq', '--redis', each.redis.url).exited;
      expect(run.code, run.stderr).toBe(1);
      expect(readRows(dir).get('A')?.error).toContain(`its model server ${attacker.baseUrl} is not one this worker sends its key to (--allow-base-url`);
      await waitFor(() => /\[JOB\] model\.H\.a1 refused: it is not signed/.test(worker.stdoutSoFar()), 'the hand-made job refused');
      expect(attacker.requests).toEqual([]);
      expect(worker.stdoutSoFar()).toContain('sends its OPENAI_API_KEY only to https://api.openai.com/v1');

      // A signed job naming that server, on a worker that allows it: it reaches it, with the key (so the test would see a leak).
      const allowing = spawnCliWith(env, 'worker', '--redis', each.redis.url, '--session-id', 'model-allowed', '--allow-base-url', attacker.baseUrl);
      each.started.push(allowing);
      await waitFor(() => allowing.stdoutSoFar().includes('taking jobs'), 'the allowing worker');
      const allowedDir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'model-allowed' });
      const allowed = await spawnCliWith({ env: { OPENAI_API_KEY: undefined } }, 'run', allowedDir, '--retries', '0', '--executor', 'openai', '--model', 'm',
        '--base-url', attacker.baseUrl, '--backend', 'bullmq', '--redis', each.redis.url).exited;
      expect(allowed.code, allowed.stderr).toBe(1);
      expect(attacker.requests.length, readRows(allowedDir).get('A')?.error).toBeGreaterThan(0);
      expect(attacker.requests[0]?.authorization).toBe(`Bearer ${kApiKey}`);
    } finally {
      await attacker.close();
    }
  });
});
