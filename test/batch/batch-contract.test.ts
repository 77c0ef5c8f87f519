import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { judgeCompletion } from '../../src/backend/openai-batch/batch-lines.js';
import type { ChatCompletion } from '../../src/backend/openai-batch/batch-api.js';
import { answerFormat } from '../../src/executors/openai/contract.js';
import { requestCost } from '../../src/knowledge/pricing.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kFirstUsage, kRepairUsage, startBatchServer, type BatchTestServer } from './batch-server.js';

let server: BatchTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A and B (B answers badly once) in wave 1, C in wave 2. */
const rows = [
  { id: 'A', title: 'A', description: 'Describe A', role: 'worker' },
  { id: 'B', title: 'B', description: 'Describe B [[bad-once]]', role: 'worker' },
  { id: 'C', title: 'C', description: 'Sum up', role: 'worker', deps: 'A;B' },
];

function batchRun(dir: string, ...flags: string[]) {
  return runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server!.baseUrl, '--batch', '--batch-poll', '0.05', ...flags);
}

/** The bodies of every line of every batch input file, read back from the server's Files API. */
async function inputBodies(): Promise<{ custom_id: string; body: Record<string, unknown> }[]> {
  const files = server!.events.flatMap((event) => (event.kind === 'upload' && event.purpose === 'batch' ? [event.file] : []));
  const texts = await Promise.all(files.map(async (file) => (await fetch(`${server!.baseUrl}/files/${file}/content`)).text()));
  return texts.flatMap((text) =>
    text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { custom_id: string; body: Record<string, unknown> }),
  );
}

function completion(content: string): ChatCompletion {
  return {
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
  };
}

describe('--batch sends and judges as the synchronous executor does', () => {
  test("each batch line carries the role's strict answer schema and both names of --max-tokens", async () => {
    server = await startBatchServer();
    const dir = buildSession(rows);
    const run = await batchRun(dir, '--max-tokens', '300');
    expect(run.code, run.stderr).toBe(0);
    const bodies = await inputBodies();
    expect(bodies.map((line) => line.custom_id)).toEqual(['A/a1/r1', 'B/a1/r1', 'B/a1/r2', 'C/a1/r1']);
    for (const { body } of bodies) {
      expect(body.response_format).toEqual(answerFormat('generic', 'worker'));
      expect(body).toMatchObject({ max_completion_tokens: 300, max_tokens: 300 });
    }
  });

  test('an answer is held to the contract: unasked supervision fields dropped with a note, an empty object repaired', () => {
    const task = { id: 'T', role: 'worker' };
    const judged = judgeCompletion(completion('{"status":"completed","findings":"done","supervision_verdict":"block"}'), task, 'generic');
    expect(judged.kind).toBe('result');
    if (judged.kind !== 'result') return;
    expect(judged.result).not.toHaveProperty('supervision_verdict');
    expect(judged.notes.join(' ')).toMatch(/supervision_verdict/);
    // The bare schema took `{}` as a completed result; the contract asks for status and findings.
    const empty = judgeCompletion(completion('{}'), task, 'generic');
    expect(empty).toMatchObject({ kind: 'repair', problem: expect.stringMatching(/"status" is missing.*"findings" is missing/) });
  });
});

describe('batch tokens are priced with the batch discount and counted by the budgets', () => {
  test("with batch_discount 0.5 status's cost is half the synchronous price of the same tokens", async () => {
    server = await startBatchServer();
    const price = { input: 1000, output: 4000, batch_discount: 0.5 };
    const dir = buildSession(rows, { session: JSON.stringify({ pipeline: 'generic', pricing: { m: price } }) });
    const run = await batchRun(dir);
    expect(run.code, run.stderr).toBe(0);
    const full = (tokens: { prompt_tokens: number; completion_tokens: number }) => requestCost({ input: price.input, output: price.output }, { ...tokens, cached_tokens: 0 });
    // A, B, B's repair, C: four requests, all answered through the Batch API.
    const synchronous = 3 * full(kFirstUsage) + full(kRepairUsage);
    const status = JSON.parse((await runCli('status', dir, '--json')).stdout) as { usage: { cost_usd: number; requests: number } };
    expect(status.usage.requests).toBe(4);
    expect(status.usage.cost_usd).toBeCloseTo(synchronous / 2, 12);
  });

  test('--batch-repair sync: the synchronous repair is priced in full', async () => {
    server = await startBatchServer();
    const price = { input: 1000, output: 4000, batch_discount: 0.5 };
    const dir = buildSession(rows, { session: JSON.stringify({ pipeline: 'generic', pricing: { m: price } }) });
    const run = await batchRun(dir, '--batch-repair', 'sync');
    expect(run.code, run.stderr).toBe(0);
    const full = (tokens: { prompt_tokens: number; completion_tokens: number }) => requestCost({ input: price.input, output: price.output }, { ...tokens, cached_tokens: 0 });
    const status = JSON.parse((await runCli('status', dir, '--json')).stdout) as { usage: { tasks: Record<string, { cost_usd: number }> } };
    expect(status.usage.tasks['B']!.cost_usd).toBeCloseTo(full(kFirstUsage) / 2 + full(kRepairUsage), 12);
  });

  test('--max-tokens-total counts batch tokens: wave 2 is not sent once wave 1 spent the budget', async () => {
    server = await startBatchServer();
    const dir = buildSession(rows);
    const run = await batchRun(dir, '--max-tokens-total', '200');
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/Halted: the session's model calls spent \d+ tokens, the budget of --max-tokens-total 200/);
    expect(server.created().flatMap((batch) => batch.customIds)).not.toContain('C/a1/r1');
    // Never started: its status cell is still empty (pending).
    expect(readRows(dir).get('C')!.status).toBe('pending');
    expect(readFileSync(join(dir, 'usage.ndjson'), 'utf8')).toContain('"batch":true');
  });
});
