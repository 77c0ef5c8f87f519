import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import type { UsageLine } from '../../src/knowledge/usage.js';

let server: FakeOpenAiServer;

beforeEach(async () => {
  // 120 prompt + 30 completion tokens per answer.
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const model = () => ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl];
const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, description: `Task ${i + 1}`, role: 'writer' }));

describe('every request in usage.ndjson, priced', () => {
  test('a retried attempt and a repair each leave their own lines; status, status --json and context.md give the cost per task and in all', async () => {
    const dir = buildSession([
      { id: 'RETRIED', description: '[[fake:repair-fails-once]]', role: 'writer' },
      { id: 'REPAIRED', description: '[[fake:invalid-then-valid]]', role: 'writer' },
      { id: 'PLAIN', description: 'Just do it', role: 'writer' },
    ]);
    const run = await runCli('run', dir, ...model(), '--retry-delay', '0', '--price-input', '1', '--price-output', '2');
    expect(run.code, run.stderr).toBe(0);
    const lines = usageLinesOf(dir);
    const key = (line: UsageLine) => `${line.task} ${line.attempt}/${line.request} ${line.kind}`;
    expect(lines.map(key).sort()).toEqual(['PLAIN 1/1 first', 'REPAIRED 1/1 first', 'REPAIRED 1/2 repair', 'RETRIED 1/1 first', 'RETRIED 2/1 first']);
    // The repair that got HTTP 500 cost nothing the server told of: no line.
    for (const line of lines) expect(line).toMatchObject({ model: 'm', prompt_tokens: 120, completion_tokens: 30, reported: true });
    const perRequest = (120 * 1 + 30 * 2) / 1e6;
    for (const line of lines) expect(line.cost_usd).toBeCloseTo(perRequest, 12);

    const status = await runCli('status', dir);
    expect(status.stdout).toContain(`Tokens: ${120 * 5} prompt, ${30 * 5} completion`);
    expect(status.stdout).toContain('Cost: $0.00090 (5 request(s))');
    expect(status.stdout).toMatch(/RETRIED .*\[300 tokens, \$0\.00036\]/);
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as { usage: { cost_usd: number; requests: number; tasks: Record<string, { requests: number; cost_usd: number }> } };
    expect(json.usage.requests).toBe(5);
    expect(json.usage.cost_usd).toBeCloseTo(5 * perRequest, 12);
    expect(json.usage.tasks['REPAIRED']!.requests).toBe(2);
    expect(json.usage.tasks['PLAIN']!.cost_usd).toBeCloseTo(perRequest, 12);
    const context = readFileSync(join(dir, 'context.md'), 'utf8');
    expect(context).toContain('## Tokens and cost');
    expect(context).toContain('| RETRIED | 2 | 240 | 0 | 60 | $0.00036 |');
  });

  test('without a price, the cost is unknown and status says how to give one', async () => {
    const dir = buildSession(tasks(1));
    expect((await runCli('run', dir, ...model())).code).toBe(0);
    const status = await runCli('status', dir);
    expect(status.stdout).toContain('Cost: unknown (1 request(s); no price for their model');
  });
});

describe('budgets stop the run like --halt, and a resume goes on counting', () => {
  test('--max-tokens-total: no task starts once the session spent it; resume with it stops at once, with a higher one finishes', async () => {
    const dir = buildSession(tasks(6));
    // One task at a time: the budget is reached after exactly two answers of 150 tokens.
    const first = await runCli('run', dir, ...model(), '--concurrency', '1', '--max-tokens-total', '300');
    expect(first.code).toBe(1);
    expect(`${first.stdout}${first.stderr}`).toMatch(/Halted: the session's model calls spent 300 tokens, the budget of --max-tokens-total 300/);
    expect(`${first.stdout}${first.stderr}`).toContain('csv-wave resume');
    expect(server.requests).toHaveLength(2);
    const rows = [...readRows(dir).values()];
    expect(rows.filter((row) => row.status === 'completed')).toHaveLength(2);
    expect(rows.filter((row) => row.status === 'pending' || row.status === '')).toHaveLength(4);

    const again = await runCli('resume', dir, ...model(), '--concurrency', '1', '--max-tokens-total', '300');
    expect(again.code).toBe(1);
    expect(server.requests).toHaveLength(2);

    const more = await runCli('resume', dir, ...model(), '--max-tokens-total', '100000');
    expect(more.code, more.stderr).toBe(0);
    expect(server.requests).toHaveLength(6);
    expect(usageLinesOf(dir)).toHaveLength(6);
  });

  test("--max-cost with session.json's pricing: stops once the session's cost reaches it", async () => {
    const dir = buildSession(tasks(5), {
      session: JSON.stringify({ pipeline: 'generic', pricing: { m: { input: 1000, output: 1000 } } }),
    });
    // 150 tokens at $1000 per million: $0.15 a request.
    const run = await runCli('run', dir, ...model(), '--concurrency', '1', '--max-cost', '0.3');
    expect(run.code).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/Halted: the session's model calls cost \$0\.30, the budget of --max-cost 0\.3/);
    expect(server.requests).toHaveLength(2);
  });
});

describe('flags of model calls', () => {
  test.each([
    [['--max-cost', '1'], /--max-cost needs the price of m: pass --price-input and --price-output/],
    [['--max-cost', 'lots'], /Expected `--max-cost` to be a number, got `lots`/],
    [['--max-cost', '0', '--price-input', '1', '--price-output', '1'], /Expected `--max-cost` to be a positive number of US dollars, got `0`/],
    [['--max-tokens', '0'], /Expected `--max-tokens` to be a positive integer \(tokens\), got `0`/],
    [['--max-tokens-total', '1.5'], /Expected `--max-tokens-total` to be a positive integer \(tokens\), got `1.5`/],
    [['--context-window', '10'], /Expected `--context-window` to be an integer ≥ 256 \(tokens\), got `10`/],
    [['--price-input', '1'], /A price for m needs both --price-input and --price-output/],
    [['--price-output', '-1', '--price-input', '1'], /Expected `--price-output` to be a number of US dollars per million tokens ≥ 0, got `-1`/],
  ])('%j is a usage error (exit 2) and calls no model', async (flags, message) => {
    const dir = buildSession(tasks(1));
    const run = await runCli('run', dir, ...model(), ...flags);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  test('the model flags go with the openai executor only', async () => {
    const dir = buildSession(tasks(1));
    const run = await runCli('run', dir, '--cmd', 'echo hi', '--max-tokens', '10');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--max-tokens: for model calls only; pass --executor openai --model NAME');
  });

  test('--max-tokens reaches the server as the answer limit', async () => {
    const dir = buildSession(tasks(1));
    expect((await runCli('run', dir, ...model(), '--max-tokens', '77')).code).toBe(0);
    expect(server.requests[0]!.body.max_tokens).toBe(77);
  });
});
