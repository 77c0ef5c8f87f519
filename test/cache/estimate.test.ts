import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { RunEstimate, SpendRange } from '../../src/cache/run-estimate.js';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows, tasksCsv, type RowInput } from '../helpers/session-builder.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

// Issue 25 item 6: `estimate` against the token counts a server reports. The fake server
// counts each message's tokens as a tokenizer would (a word or a punctuation mark is a
// token), so that the characters per token differ from text to text; every answer is 30
// completion tokens.

let server: FakeOpenAiServer;
beforeEach(async () => {
  server = await startFakeOpenAiServer({ contextTokens: 10_000_000, countTokens: (text) => (text.match(/\w+|[^\w\s]/g) ?? []).length, usage: { prompt_tokens: 0, completion_tokens: 30 } });
});
afterEach(async () => {
  await server.close();
});

const model = () => ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--price-input', '1', '--price-output', '2'];

const kFirst: RowInput[] = [
  { id: 'T1', description: 'Write the plan for the new bus lines', role: 'writer' },
  { id: 'T2', description: 'List the costs, one per line, with a short reason for each: fuel, drivers, maintenance', role: 'writer' },
  { id: 'T3', description: 'Name three risks', role: 'writer' },
  { id: 'T4', description: 'Sum up what riders said about night buses and weekend service in the survey', role: 'writer' },
];

const kSecond: RowInput[] = [
  { id: 'T5', description: 'Draft the timetable for route 7', role: 'writer' },
  { id: 'T6', description: 'Estimate, in euros, what a monthly pass should cost; say what it depends on', role: 'writer' },
  { id: 'T7', description: 'Write a one-line slogan', role: 'writer' },
  { id: 'T8', description: 'Review the timetable of T5', role: 'writer', deps: 'T5', context_from: 'T5' },
];

async function estimate(dir: string, ...flags: string[]): Promise<RunEstimate> {
  const result = await runCli('estimate', dir, ...model(), ...flags, '--json');
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as RunEstimate;
}

function within(actual: number, range: { low: number; high: number | null }, what: string): void {
  expect(actual, `${what}: ${actual} in ${range.low} to ${range.high}`).toBeGreaterThanOrEqual(range.low);
  expect(actual, `${what}: ${actual} in ${range.low} to ${range.high}`).toBeLessThanOrEqual(range.high!);
}

/** What the server then reported for these tasks: their usage.ndjson lines after the first `skip`. */
function spent(dir: string, ids: readonly string[], skip: number): { prompt: number; completion: number; cost: number } {
  const lines = usageLinesOf(dir).slice(skip).filter((line) => ids.includes(line.task));
  expect(lines.map((line) => line.task).sort()).toEqual([...ids].sort());
  return {
    prompt: lines.reduce((sum, line) => sum + line.prompt_tokens, 0),
    completion: lines.reduce((sum, line) => sum + line.completion_tokens, 0),
    cost: lines.reduce((sum, line) => sum + (line.cost_usd ?? 0), 0),
  };
}

describe('estimate', () => {
  test('before any request: the default 4 characters per token, and --max-tokens as the completion\'s upper bound', async () => {
    const dir = buildSession(kFirst);
    const before = readFileSync(join(dir, 'tasks.csv'));
    const first = await estimate(dir, '--max-tokens', '50');
    expect(first.chars_per_token).toEqual({ value: 4, low: 3, high: 5, measured_requests: 0 });
    expect(first.tasks).toEqual({ run: 4, after: 0, cached: 0, blocked: 0, kept: 0 });
    expect(first.total!.completion_tokens).toEqual({ low: 0, high: 200 });
    expect(first.assumptions.join('\n')).toMatch(/4 characters per token \(no request of this session recorded the server's count yet\)/);
    expect(server.requests).toHaveLength(0);
    expect(readFileSync(join(dir, 'tasks.csv'))).toEqual(before);
    // Without --max-tokens nothing bounds the answers.
    expect((await estimate(dir)).total!.completion_tokens.high).toBeNull();
  });

  test('after a first run: the next tasks\' prompt tokens, completion tokens and cost fall within the stated range of what the server then reports; a task after another is counted apart; a cached one is subtracted', async () => {
    const dir = buildSession(kFirst);
    const first = await runCli('run', dir, ...model());
    expect(first.code, first.stderr).toBe(0);
    const recorded = usageLinesOf(dir);
    expect(recorded).toHaveLength(4);
    for (const line of recorded) expect(line.prompt_chars).toBeGreaterThan(0);

    // Four new tasks (T8 after T5), and T1 back to pending: its inputs are unchanged, so the cache answers it.
    const rows = [...readRows(dir).values()].map((row): RowInput => ({ id: row.id, description: row.description, role: row.role, status: row.status, findings: row.findings }));
    Object.assign(rows.find((row) => row.id === 'T1')!, { status: 'pending', findings: '' });
    writeFileSync(join(dir, 'tasks.csv'), tasksCsv([...rows, ...kSecond]));

    const planned = await estimate(dir);
    expect(planned.tasks).toEqual({ run: 3, after: 1, cached: 1, blocked: 0, kept: 3 });
    expect(planned.chars_per_token.measured_requests).toBe(4);
    const t1 = recorded.find((line) => line.task === 'T1')!;
    expect(planned.cached).toEqual({ tasks: 1, prompt_tokens: t1.prompt_tokens, completion_tokens: 30, saved_usd: expect.closeTo(t1.cost_usd!, 12) });
    const known = planned.known as SpendRange;
    const after = planned.after as SpendRange;
    expect([known.tasks, after.tasks]).toEqual([3, 1]);

    const run = await runCli('run', dir, ...model());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\[CACHED\] T1 /m);
    const knownSpent = spent(dir, ['T5', 'T6', 'T7'], 4);
    within(knownSpent.prompt, known.prompt_tokens, 'prompt tokens of T5-T7');
    within(knownSpent.completion, known.completion_tokens, 'completion tokens of T5-T7');
    within(knownSpent.cost, known.cost_usd!, 'cost of T5-T7');
    const afterSpent = spent(dir, ['T8'], 4);
    within(afterSpent.prompt, after.prompt_tokens, 'prompt tokens of T8');
    within(afterSpent.completion, after.completion_tokens, 'completion tokens of T8');
  });

  test('--batch takes the Batch API\'s discount off the cost', async () => {
    const dir = buildSession(kFirst, { session: { pipeline: 'generic', pricing: { m: { input: 1, output: 2, batch_discount: 0.5 } } } });
    const flags = ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--max-tokens', '40', '--json'];
    const plain = JSON.parse((await runCli('estimate', dir, ...flags)).stdout) as RunEstimate;
    const batch = JSON.parse((await runCli('estimate', dir, ...flags, '--batch')).stdout) as RunEstimate;
    expect(batch.total!.cost_usd!.low).toBeCloseTo(plain.total!.cost_usd!.low / 2, 12);
    expect(batch.total!.cost_usd!.high!).toBeCloseTo(plain.total!.cost_usd!.high! / 2, 12);
    expect(batch.assumptions.join('\n')).toMatch(/--batch: the Batch API's discount of 50% is taken off/);
  });

  test('run --dry-run prints each prompt the run would send, under a line naming its task, the system prompt once; it sends nothing', async () => {
    const dir = buildSession(kSecond);
    const dry = await runCli('run', dir, ...model(), '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(dry.stdout.match(/^# the system prompt of the prompts below:$/gm)).toHaveLength(1);
    for (const row of kSecond) expect(dry.stdout).toContain(`Task: ${row.id}`);
    expect(dry.stdout).toMatch(/^# prompt of T5 \(writer\)\n/m);
    expect(dry.stdout).toMatch(/^# prompt of T8 \(writer\), after T5: shown with what is known now\n/m);
    expect(dry.stdout).toContain('Draft the timetable for route 7');
    expect(dry.stderr).toMatch(/^Total for m \(4 task\(s\)\): /m);
  });
});
