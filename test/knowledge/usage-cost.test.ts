import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Budget } from '../../src/knowledge/budget.js';
import { requestCost } from '../../src/knowledge/pricing.js';
import { appendUsageLines, checkedRequests, readUsage, usageLines, type RequestUsage } from '../../src/knowledge/usage.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const request = (overrides: Partial<RequestUsage> = {}): RequestUsage => ({
  request: 1,
  kind: 'first',
  model: 'm',
  prompt_tokens: 1_000_000,
  completion_tokens: 100_000,
  cached_tokens: 0,
  reported: true,
  ...overrides,
});

const kPrice = { input: 0.15, output: 0.6, cached_input: 0.075, batch_discount: 0.5 };

describe('requestCost', () => {
  test('prompt, cached prompt and completion tokens at their prices per million; the batch discount when batched', () => {
    expect(requestCost(kPrice, request())).toBeCloseTo(0.15 + 0.06, 10);
    expect(requestCost(kPrice, request({ cached_tokens: 400_000 }))).toBeCloseTo(0.6 * 0.15 + 0.4 * 0.075 + 0.06, 10);
    expect(requestCost(kPrice, request({ batch: true }))).toBeCloseTo((0.15 + 0.06) / 2, 10);
    // No cached price: cached tokens cost the input price.
    expect(requestCost({ input: 1, output: 2 }, request({ cached_tokens: 500_000 }))).toBeCloseTo(1 + 0.2, 10);
  });
});

describe('usage.ndjson', () => {
  test('one line per request with task, attempt, kind and cost; readUsage sums them per task and in all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-usage-'));
    appendUsageLines(new SessionWriter(dir), usageLines('A', 1, [request(), request({ request: 2, kind: 'repair' })], kPrice));
    appendUsageLines(new SessionWriter(dir), usageLines('A', 2, [request({ reported: false, prompt_tokens: 0, completion_tokens: 0 })], kPrice));
    appendUsageLines(new SessionWriter(dir), usageLines('B', 1, [request({ model: 'other' })]));
    const lines = readFileSync(join(dir, 'usage.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line.task, line.attempt, line.request, line.kind, line.reported])).toEqual([
      ['A', 1, 1, 'first', true],
      ['A', 1, 2, 'repair', true],
      ['A', 2, 1, 'first', false],
      ['B', 1, 1, 'first', true],
    ]);
    expect(lines[0]!.cost_usd).toBeCloseTo(0.21, 10);
    expect(lines[2]).not.toHaveProperty('cost_usd');
    const totals = readUsage(dir)!;
    expect(totals).toMatchObject({ prompt_tokens: 3_000_000, completion_tokens: 300_000, requests: 4, unpriced: 1 });
    expect(totals.cost_usd).toBeCloseTo(0.42, 10);
    expect(totals.byTask.get('A')).toMatchObject({ requests: 3, prompt_tokens: 2_000_000, unpriced: 0 });
    // A price table prices the lines written without a cost (B's model), and only those.
    const priced = readUsage(dir, { other: { input: 1, output: 1 }, m: { input: 100, output: 100 } })!;
    expect(priced.cost_usd).toBeCloseTo(0.42 + 1.1, 10);
    expect(priced.unpriced).toBe(0);
  });

  test('a cut last line (a crash mid-write) and lines of the older shape are read as far as they go', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-usage-'));
    appendFileSync(join(dir, 'usage.ndjson'), '{"ts":"t","task":"OLD","prompt_tokens":3,"completion_tokens":4}\n{"ts":"t","task":"A","prompt_tok');
    expect(readUsage(dir)).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, requests: 1 });
  });

  test('requests read from a reply are checked: bad counts become 0, other items are dropped', () => {
    expect(checkedRequests([{ request: 2, kind: 'repair', model: 'm', prompt_tokens: -5, completion_tokens: 1.5, cached_tokens: '9', reported: true }, null, 'x'])).toEqual([
      { request: 2, kind: 'repair', model: 'm', prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: true },
    ]);
    expect(checkedRequests({ not: 'a list' })).toEqual([]);
  });
});

describe('Budget', () => {
  test('reached once the tokens or the cost pass the limit, counting what the session had spent before', () => {
    const tokens = new Budget({ maxTokensTotal: 1000 }, { prompt_tokens: 600, completion_tokens: 300, cost_usd: 0 });
    expect(tokens.reached()).toBeUndefined();
    tokens.add(usageLines('A', 1, [request({ prompt_tokens: 80, completion_tokens: 19 })]));
    expect(tokens.reached()).toBeUndefined();
    tokens.add(usageLines('A', 1, [request({ prompt_tokens: 1, completion_tokens: 0 })]));
    expect(tokens.reached()).toMatch(/spent 1000 tokens, the budget of --max-tokens-total 1000/);

    const cost = new Budget({ maxCostUsd: 0.5 }, undefined);
    cost.add(usageLines('A', 1, [request()], kPrice));
    expect(cost.reached()).toBeUndefined();
    cost.add(usageLines('A', 2, [request(), request()], kPrice));
    expect(cost.reached()).toMatch(/cost \$0\.63, the budget of --max-cost 0\.5/);
  });
});

describe('agent turns', () => {
  test("a cost the agent CLI reported is kept over the price table's; without one the turn is priced", () => {
    const reported = request({ kind: 'agent', agent_session: 's-1', cost_usd: 0.0123, cache_creation_tokens: 7, reasoning_tokens: 3 });
    const [kept, priced] = usageLines('A', 1, [reported, request({ kind: 'agent' })], kPrice);
    expect(kept).toMatchObject({ kind: 'agent', agent_session: 's-1', cost_usd: 0.0123, cache_creation_tokens: 7, reasoning_tokens: 3 });
    expect(priced!.cost_usd).toBeCloseTo(0.15 + 0.06, 10);
  });

  test('a reply from another thread or machine keeps the agent fields that check and drops the others', () => {
    const good = { ...request({ kind: 'agent' }), agent_session: 'thread-9', reasoning_tokens: 4, cache_creation_tokens: 2, cost_usd: 0.5 };
    expect(checkedRequests([good])).toEqual([good]);
    const [bad] = checkedRequests([{ ...request({ kind: 'agent' }), agent_session: 7, reasoning_tokens: -1, cache_creation_tokens: 1.5, cost_usd: -2 }]);
    expect(bad).toEqual(request({ kind: 'agent' }));
    expect(checkedRequests([{ ...request(), cost_usd: Number.POSITIVE_INFINITY }])[0]).not.toHaveProperty('cost_usd');
    expect(checkedRequests([{ ...request(), kind: 'other' }])[0]!.kind).toBe('first');
  });
});
