import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { replySigned, Signing } from '../../src/backend/bullmq/trust/signing.js';
import type { AttemptLine } from '../../src/schema/attempt.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { addByHand, handMadeRequest, jobData, jobWaits } from '../helpers/bullmq-jobs.js';
import { jobIdSource, readyWorker, redisForEachTest } from '../helpers/bullmq-session.js';
import { forgeReplies } from '../helpers/forged-reply.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

/** The lines of a session's attempts.ndjson. */
function attemptLines(dir: string): AttemptLine[] {
  const path = join(dir, 'attempts.ndjson');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as AttemptLine);
}

/** The return value of a job once it completed, as the worker returned it (JSON text). */
async function completedValue(url: string, queueName: string, jobId: string): Promise<string> {
  const events = new QueueEvents(queueName, { connection: { url } });
  const queue = new Queue(queueName, { connection: { url } });
  try {
    await events.waitUntilReady();
    const job = await queue.getJob(jobId);
    if (job && (await job.getState()) !== 'completed') await job.waitUntilFinished(events);
    const done = await queue.getJob(jobId);
    return done!.returnvalue as string;
  } finally {
    await events.close();
    await queue.close();
  }
}

describe.runIf(kRunRedisTests)('--backend bullmq: an attempt is timed and placed where it ran', () => {
  const each = redisForEachTest();

  it("attempts.ndjson records the worker's host and pid, its execution time as duration_ms and the queue wait apart as queued_ms; [DONE] shows the worker's time and the wait", { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'timing' });
    const coordinator = spawnCli('run', dir, '--cmd', 'echo done-{id}', '--backend', 'bullmq', '--redis', each.redis.url);
    each.started.push(coordinator);
    // The job waits in the queue from before this moment until a worker exists: all of that is queue wait, none execution.
    await jobWaits(each.redis.url, 'csv-wave-timing', 'A');
    const waitingSince = performance.now();
    const spawnedAt = performance.now();
    const worker = await readyWorker(each.redis.url, '--session-id', 'timing');
    each.started.push(worker);
    const ran = await coordinator.exited;
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'done-A' });

    await waitFor(() => /\[JOB\] \S+ completed \(\d+ ms\)/.test(worker.stdoutSoFar()), "the worker's line");
    const jobMs = Number(new RegExp(`\\[JOB\\] ${jobIdSource('timing', 'A', 1)} completed \\((\\d+) ms\\)`).exec(worker.stdoutSoFar())?.[1]);
    const [line, ...more] = attemptLines(dir);
    expect(more).toEqual([]);
    // The worker's process, not the coordinator's (the same machine here: the pid tells them apart).
    expect(line).toMatchObject({ task: 'A', attempt: 1, outcome: 'completed', host: hostname(), pid: worker.child.pid });
    expect(line!.pid).not.toBe(coordinator.child.pid);
    // Measured by the worker inside the span its [JOB] line gives, on its own clock: never more.
    // The coordinator's own span held the worker's whole start-up besides.
    expect(line!.duration_ms).toBeLessThanOrEqual(jobMs);
    expect(Date.parse(line!.end) - Date.parse(line!.start)).toBe(line!.duration_ms);
    // The wait held at least the time from seeing the job wait to starting the worker (1 ms for the roundings).
    expect(typeof line!.queued_ms).toBe('number');
    expect(line!.queued_ms!).toBeGreaterThanOrEqual(Math.floor(spawnedAt - waitingSince) - 1);

    // The [DONE] line: the worker's time, then the wait.
    const done = /\[DONE\] A \(wave 1, (\d+\.\d)s, queued (\S+)\) -> done-A/.exec(ran.stdout);
    expect(done, ran.stdout).not.toBeNull();
    expect(Number(done![1])).toBeLessThanOrEqual(Number((jobMs / 1000).toFixed(1)));
  });

  it("a reply of an older worker (its envelope of version 1, without where and how long it ran) is merged, recorded with the coordinator's host, pid and timing as before", { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'older-worker' });
    // A worker of before version 2 seals its reply without `ran`: what forgeReplies does, with the secret.
    const older = await forgeReplies(
      each.redis.url,
      'older-worker',
      (request) =>
        JSON.stringify(
          finishedAttempt({
            findings: 'from-an-older-worker',
            discovery: { taskId: request.task.id, role: 'worker', status: 'completed', findings: 'from-an-older-worker', error: null, artifacts: [] },
          }),
        ),
      kTestSecret,
    );
    try {
      const coordinator = spawnCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', each.redis.url);
      each.started.push(coordinator);
      const ran = await coordinator.exited;
      expect(ran.code, ran.stderr).toBe(0);
      expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'from-an-older-worker' });
      const [line] = attemptLines(dir);
      expect(line).toMatchObject({ task: 'A', outcome: 'completed', host: hostname(), pid: coordinator.child.pid });
      expect(line).not.toHaveProperty('queued_ms');
      expect(ran.stdout).toMatch(/\[DONE\] A \(wave 1, \d+\.\ds\) -> from-an-older-worker/);
    } finally {
      await older.stop();
    }
  });

  it('a worker replies in version 2 (signed with where and how long it ran) only to a job that says its coordinator reads it; a job of an older coordinator gets version 1', { timeout: 300_000 }, async () => {
    const queue = 'csv-wave-envelopes';
    const worker = await readyWorker(each.redis.url, '--session-id', 'envelopes');
    each.started.push(worker);
    const request = (id: string) => handMadeRequest(id, { type: 'command', template: 'echo {id}' });
    // As an older coordinator adds it: no `envelope`.
    await addByHand(each.redis.url, queue, 'envelopes.OLD.a1', jobData(request('OLD'), queue, 'envelopes.OLD.a1', kTestSecret));
    await addByHand(each.redis.url, queue, 'envelopes.NEW.a1', { ...jobData(request('NEW'), queue, 'envelopes.NEW.a1', kTestSecret), envelope: 2 });
    const signing = Signing.withSecret(kTestSecret);

    const old = JSON.parse(await completedValue(each.redis.url, queue, 'envelopes.OLD.a1')) as Record<string, unknown>;
    expect(Object.keys(old).sort()).toEqual(['digest', 'reply', 'sig', 'v']);
    expect(old['v']).toBe(1);
    expect(signing.refusal(replySigned(queue, 'envelopes.OLD.a1', old['digest'] as string, old['reply'] as string), old['sig'])).toBeUndefined();

    const current = JSON.parse(await completedValue(each.redis.url, queue, 'envelopes.NEW.a1')) as Record<string, unknown>;
    expect(current['v']).toBe(2);
    const ranOn = current['ran'] as { host: string; pid: number; ms: number };
    expect(ranOn).toEqual({ host: hostname(), pid: worker.child.pid, ms: expect.any(Number) });
    expect(signing.refusal(replySigned(queue, 'envelopes.NEW.a1', current['digest'] as string, current['reply'] as string, ranOn), current['sig'])).toBeUndefined();
    // The signature covers `ran`: without it, or with another, it does not verify.
    expect(signing.refusal(replySigned(queue, 'envelopes.NEW.a1', current['digest'] as string, current['reply'] as string), current['sig'])).toBeDefined();
    expect(signing.refusal(replySigned(queue, 'envelopes.NEW.a1', current['digest'] as string, current['reply'] as string, { ...ranOn, ms: ranOn.ms + 1 }), current['sig'])).toBeDefined();
  });
});
