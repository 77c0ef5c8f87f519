import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import type { BatchEnding } from '../helpers/model-server/batches.js';
import { kFirstUsage, kRepairUsage, startBatchServer, type BatchTestServer } from './batch-server.js';

let server: BatchTestServer | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

/** Two tasks in wave 1 (B answers badly once), C in wave 2 reading both. */
function session(bDescription = 'Describe B [[bad-once]]'): string {
  return buildSession([
    { id: 'A', title: 'A', description: 'Describe A', role: 'worker' },
    { id: 'B', title: 'B', description: bDescription, role: 'worker' },
    { id: 'C', title: 'C', description: 'Sum up', role: 'worker', deps: 'A;B', context_from: 'A;B' },
  ]);
}

function batchRun(dir: string, ...flags: string[]) {
  return runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server!.baseUrl, '--batch', '--batch-poll', '0.05', ...flags);
}

describe('--batch: the tasks of a wave go to the Batch API as one batch', () => {
  test('a wave is one batch, a bad answer is repaired in the next batch, every answer merged with its tokens', async () => {
    server = await startBatchServer();
    const dir = session();
    const run = await batchRun(dir);
    expect(run.code, run.stderr).toBe(0);

    // Wave 1 as one batch, B's repair alone in the next one, then wave 2.
    expect(server.created().map((batch) => batch.customIds)).toEqual([['A/a1/r1', 'B/a1/r1'], ['B/a1/r2'], ['C/a1/r1']]);
    expect(server.events.filter((event) => event.kind === 'upload').map((event) => event.kind === 'upload' && event.lines)).toEqual([2, 1, 1]);
    expect(server.chats).toEqual([]);

    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'completed', findings: 'Answered A' });
    expect(rows.get('B')).toMatchObject({ status: 'completed', findings: 'Answered B after a repair' });
    expect(rows.get('C')).toMatchObject({ status: 'completed', findings: 'Answered C' });
    // C's prompt carried A's and B's findings: the batch line is the same request the executor sends.
    expect(run.stdout).toMatch(/\[BATCH\] batch_\d+ completed: 2 of 2 answered, 0 failed/);

    // One line per request (issue 15), each answered through the Batch API marked so.
    const usage = usageLinesOf(dir);
    expect(usage.map((line) => line.task).sort()).toEqual(['A', 'B', 'B', 'C']);
    expect(usage.find((line) => line.task === 'A')).toMatchObject({ ...kFirstUsage, request: 1, kind: 'first', batch: true });
    expect(usage.filter((line) => line.task === 'B')).toMatchObject([
      { ...kFirstUsage, request: 1, kind: 'first', batch: true },
      { ...kRepairUsage, request: 2, kind: 'repair', batch: true },
    ]);
  });

  test('--batch-repair sync: the repair is one synchronous request, its tokens not counted as batch tokens', async () => {
    server = await startBatchServer();
    const dir = session();
    const run = await batchRun(dir, '--batch-repair', 'sync');
    expect(run.code, run.stderr).toBe(0);
    expect(server.created().map((batch) => batch.customIds)).toEqual([['A/a1/r1', 'B/a1/r1'], ['C/a1/r1']]);
    expect(server.chats).toHaveLength(1);
    expect(JSON.stringify(server.chats[0])).toContain('Your answer could not be used');
    expect(readRows(dir).get('B')).toMatchObject({ status: 'completed', findings: 'Answered B after a repair' });
    const b = usageLinesOf(dir).filter((line) => line.task === 'B');
    expect(b).toMatchObject([
      { ...kFirstUsage, kind: 'first', batch: true },
      { ...kRepairUsage, kind: 'repair' },
    ]);
    expect(b[1]).not.toHaveProperty('batch');
  });

  test('an answer still bad after its repair fails the task as invalid-output', async () => {
    server = await startBatchServer();
    const dir = session('Describe B [[bad-always]]');
    const run = await batchRun(dir);
    expect(run.code).toBe(1);
    const b = readRows(dir).get('B')!;
    expect(b.status).toBe('failed');
    expect(b.error).toMatch(/^Invalid model answer after one repair request: the answer is not valid JSON/);
    expect(readRows(dir).get('C')!.status).toBe('skipped');
  });

  test('an expired batch requeues its tasks (transient, retried in the next batch)', async () => {
    let batches = 0;
    server = await startBatchServer({ hold: async (): Promise<BatchEnding> => (++batches === 1 ? 'expire' : 'complete') });
    const dir = session('Describe B');
    const run = await batchRun(dir, '--retry-delay', '0');
    expect(run.code, run.stderr).toBe(0);
    expect(server.created().map((batch) => batch.customIds)).toEqual([['A/a1/r1', 'B/a1/r1'], ['A/a2/r1', 'B/a2/r1'], ['C/a1/r1']]);
    expect(run.stdout).toMatch(/\[RETRY\] A attempt 1 failed \(transient\): The batch expired \(its 24h window ended\) before this request ran/);
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { task: string; outcome: string; error_class: string });
    expect(attempts.filter((line) => line.outcome === 'retried').map((line) => [line.task, line.error_class]).sort()).toEqual([['A', 'transient'], ['B', 'transient']]);
    expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['completed', 'completed', 'completed']);
  });

  test('a failed batch fails its tasks with the batch errors (task-failure, not retried)', async () => {
    server = await startBatchServer({ hold: async (): Promise<BatchEnding> => 'fail' });
    const dir = session('Describe B');
    const run = await batchRun(dir);
    expect(run.code).toBe(1);
    expect(server.created()).toHaveLength(1);
    const rows = readRows(dir);
    expect(rows.get('A')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^No answer: batch batch_\d+ failed: The batch failed at the server$/) });
    expect(rows.get('C')!.status).toBe('skipped');
  });

  test('with eager, the tasks that become ready together go out together, a repair among them', async () => {
    server = await startBatchServer();
    // A and B in the first batch; C waits only for A, so it goes out with B's repair, not after it.
    const dir = buildSession([
      { id: 'A', title: 'A', description: 'Describe A', role: 'worker' },
      { id: 'B', title: 'B', description: 'Describe B [[bad-once]]', role: 'worker' },
      { id: 'C', title: 'C', description: 'After A', role: 'worker', deps: 'A' },
      { id: 'D', title: 'D', description: 'After B', role: 'worker', deps: 'B' },
    ]);
    const run = await batchRun(dir, '--schedule', 'eager');
    expect(run.code, run.stderr).toBe(0);
    expect(server.created().map((batch) => batch.customIds)).toEqual([['A/a1/r1', 'B/a1/r1'], ['B/a1/r2', 'C/a1/r1'], ['D/a1/r1']]);
    expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  test('a poll that fails is tried again; its warning never shows the key the server echoed', async () => {
    server = await startBatchServer({ failPolls: 1 });
    const key = 'sk-batch-DO-NOT-PRINT-5c1e9a7b3d';
    vi.stubEnv('OPENAI_API_KEY', key);
    const dir = session('Describe B');
    const run = await batchRun(dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: Polling batch batch_\d+ failed \(.*Internal error for Bearer \*\*\*.*\); trying again/);
    expect(`${run.stdout}${run.stderr}`).not.toContain(key);
    expect(server.created()).toHaveLength(2);
  });

  test('--batch needs the openai executor, and the batch flags need --batch (exit 2, saying what to do)', async () => {
    const dir = session();
    const noModel = await runCli('run', dir, '--cmd', 'echo hi', '--batch');
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain('--batch');
    expect(noModel.stderr).toContain('--executor openai');
    const noBatch = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', '--cancel-batch');
    expect(noBatch.code).toBe(2);
    expect(noBatch.stderr).toContain('--cancel-batch');
    const badRepair = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--batch', '--batch-repair', 'later');
    expect(badRepair.code).toBe(2);
    expect(badRepair.stderr).toContain('--batch-repair');
    const badPoll = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--batch', '--batch-poll', '0');
    expect(badPoll.code).toBe(2);
    expect(badPoll.stderr).toContain('Expected `--batch-poll` to be a number of seconds above 0');
  });
});
