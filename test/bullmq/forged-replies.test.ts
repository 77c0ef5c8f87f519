import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { AttemptJobData } from '../../src/backend/bullmq/jobs/job-data.js';
import { replySigned, Signing } from '../../src/backend/bullmq/trust/signing.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { jobData } from '../helpers/bullmq-jobs.js';
import { jobIdSource, kNoSecret, readyWorker, readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { sleep, spawnCli, spawnCliWith } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

const kOtherSecret = 'another-secret-fedcba9876543210fedcba9876543210';

/** A reply a worker could send for task `id`, with findings no real run gives. */
function forgedReply(id: string): string {
  return JSON.stringify(
    finishedAttempt({ findings: `FORGED-${id}`, discovery: { taskId: id, role: 'worker', status: 'completed', findings: `FORGED-${id}`, error: null, artifacts: [] } }),
  );
}

/** The first waiting job of the queue whose task is `taskId`, once the coordinator has added it. */
async function waitingJob(url: string, queueName: string, taskId: string): Promise<{ queue: Queue; job: Job<AttemptJobData> }> {
  const queue = new Queue<AttemptJobData>(queueName, { connection: { url } });
  for (let look = 0; look < 1200; look++) {
    const job = (await queue.getWaiting()).find((waiting) => waiting.data.request.task.id === taskId);
    if (job) return { queue, job };
    await sleep(50);
  }
  await queue.close();
  throw new Error(`Gave up waiting for the job of ${taskId}`);
}

describe.runIf(kRunRedisTests)('a reply is merged only when it is signed and answers the request submitted', () => {
  const each = redisForEachTest();

  it('a completed reply forged by someone with access to the Redis (raw, unsigned, or signed with another secret) is not merged', { timeout: 300_000 }, async () => {
    const dir = buildSession(['A', 'B', 'C'].map((id) => ({ id, description: id, role: 'worker' })), { sessionId: 'forge' });
    const coordinator = spawnCli('run', dir, '--cmd', 'echo real-{id}', '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    // No csv-wave worker: the attacker's plain BullMQ worker takes the jobs and completes them.
    const attacker = new Worker<AttemptJobData, string>(
      'csv-wave-forge',
      async (job) => {
        const { id } = job.data.request.task;
        const reply = forgedReply(id);
        if (id === 'A') return reply; // the reply as workers sent it before replies were signed
        const digest = job.data.digest;
        if (id === 'B') return JSON.stringify({ v: 1, digest, reply });
        const sig = Signing.withSecret(kOtherSecret).sign(replySigned(job.queueName, job.id!, digest, reply));
        return JSON.stringify({ v: 1, digest, reply, sig });
      },
      { connection: { url: each.redis.url, maxRetriesPerRequest: null } },
    );
    try {
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(1);
      const rows = readRows(dir);
      for (const id of ['A', 'B', 'C']) {
        expect(rows.get(id)?.status, id).toBe('failed');
        expect(rows.get(id)?.error, id).toMatch(new RegExp(`^Invalid output: the reply of job ${jobIdSource('forge', id, 1)} cannot be used: `));
      }
      expect(rows.get('A')?.error).toContain('it is not a signed reply envelope');
      expect(rows.get('B')?.error).toContain('it is not signed');
      expect(rows.get('C')?.error).toContain('its signature does not verify');
      expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toContain('FORGED');
    } finally {
      await attacker.close();
    }
  });

  it.each([
    ['without a secret (--insecure-no-secret on both sides)', ['--insecure-no-secret'], undefined],
    ['with the secret: another signer of it (a second coordinator on the session id) replaced the job', [], kTestSecret],
  ])('a job whose request was replaced in Redis is never merged, %s: a warning says so and the attempt runs again', { timeout: 300_000 }, async (_what, flags, secret) => {
    const sessionId = secret === undefined ? 'swap-open' : 'swap-signed';
    const queueName = `csv-wave-${sessionId}`;
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId });
    const env = secret === undefined ? kNoSecret : {};
    const coordinator = spawnCliWith(env, 'run', dir, '--cmd', 'echo ORIGINAL', ...flags, '--retry-delay', '0.1', '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    const { queue, job } = await waitingJob(each.redis.url, queueName, 'A');
    try {
      const request = job.data.request;
      const changed = { ...request, executor: { type: 'command' as const, template: 'echo CHANGED' } };
      await job.updateData(jobData(changed, queueName, job.id!, secret));
    } finally {
      await queue.close();
    }
    each.started.push(await readyWorkerWith(env, each.redis.url, '--session-id', sessionId, ...flags));
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(new RegExp(`job ${jobIdSource(sessionId, 'A', 1)} ran a request that is not the one this run submitted`));
    // The changed command ran on the worker, but its output was never merged: the retry ran the task's own.
    const row = readRows(dir).get('A');
    expect(row?.findings).toBe('ORIGINAL');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).not.toContain('CHANGED');
  });
});

describe.runIf(kRunRedisTests)('the secret of a coordinator and its workers', () => {
  const each = redisForEachTest();

  it('a command on a worker does not get the secret in its environment', { timeout: 300_000 }, async () => {
    each.started.push(await readyWorker(each.redis.url, '--session-id', 'env-test'));
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'env-test' });
    const run = await spawnCli('run', dir, '--cmd', 'echo "[$CSV_WAVE_SECRET]"', '--backend', 'bullmq', '--redis', each.redis.url).exited;
    expect(run.code, run.stderr).toBe(0);
    // Empty: not the secret, nor the *** the scrubber would have made of it.
    expect(readRows(dir).get('A')?.findings).toBe('[]');
  });
});
