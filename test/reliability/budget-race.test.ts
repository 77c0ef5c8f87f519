import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { RunEmitter, runSession } from '../../src/index.js';
import { readUsage } from '../../src/knowledge/usage.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/**
 * Many model tasks racing past a budget: 200 tasks at concurrency 64 against the fake
 * server (120 + 30 tokens an answer), a budget that the 20th answer reaches. The run is a
 * library run in this process, so that each task start can look at what the run had
 * written to usage.ndjson by then: the budget is known from the moment its line is.
 */

const kTasks = 200;
const kConcurrency = 64;
/** Tokens of one answer of the fake server. */
const kPerRequest = 150;
/** Reached by the 20th answer. */
const kTokenBudget = 20 * kPerRequest;

let server: FakeOpenAiServer;
beforeEach(async () => {
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const tasks = () => Array.from({ length: kTasks }, (_, index) => ({ id: `T${String(index + 1).padStart(3, '0')}`, description: `Task ${index + 1}`, role: 'writer' }));

/** Runs the session; at each task start, the tokens and dollars usage.ndjson held (what the run's budget had counted). */
async function budgetRun(dir: string, options: { endpointConcurrency?: number; maxTokensTotal?: number; maxCostUsd?: number }) {
  const events = new RunEmitter();
  const spentAtStarts: { tokens: number; cost: number }[] = [];
  events.on('task:start', () => {
    const usage = readUsage(dir);
    spentAtStarts.push({ tokens: usage ? usage.prompt_tokens + usage.completion_tokens : 0, cost: usage?.cost_usd ?? 0 });
  });
  const summary = await runSession(dir, {
    executor: { type: 'openai', model: 'm', baseUrl: server.baseUrl },
    concurrency: kConcurrency,
    price: { input: 1000, output: 1000 },
    events,
    ...options,
  });
  const lines = usageLinesOf(dir);
  const rows = [...readRows(dir).values()];
  return {
    summary,
    spentAtStarts,
    requests: server.requests.length,
    tokens: lines.reduce((sum, line) => sum + line.prompt_tokens + line.completion_tokens, 0),
    completed: rows.filter((row) => row.status === 'completed').length,
    pending: rows.filter((row) => row.status === 'pending' || row.status === '').length,
  };
}

describe('many concurrent tasks racing past the budget', () => {
  test(`--max-tokens-total, ${kTasks} tasks at concurrency ${kConcurrency} (8 requests at the endpoint): no task starts and no waiting request goes out once the budget is known`, async () => {
    const dir = buildSession(tasks());
    const run = await budgetRun(dir, { maxTokensTotal: kTokenBudget });
    console.log(`budget race (endpoint 8): ${run.requests} requests, ${run.tokens} tokens for a budget of ${kTokenBudget}, ${run.completed} completed, ${run.pending} pending, ${run.spentAtStarts.length} starts`);
    expect(run.summary.exitCode).toBe(1);
    expect(run.summary.stopped).toBe('halt');
    // No task started once usage.ndjson showed the budget spent.
    expect(run.spentAtStarts.filter((spent) => spent.tokens >= kTokenBudget)).toEqual([]);
    // The tasks that waited for one of the endpoint's 8 slots went back to pending unsent: at
    // most the 8 requests out when the 20th answer came are spent past the budget.
    expect(run.requests).toBeLessThanOrEqual(20 + 8);
    expect(run.tokens).toBeLessThanOrEqual(kTokenBudget + 8 * kPerRequest);
    expect(run.completed).toBe(run.requests);
    expect(run.pending).toBe(kTasks - run.completed);
  });

  test(`--max-cost, every request in flight (--endpoint-concurrency ${kConcurrency}): the requests out when it is reached finish, none starts after, the overshoot is at most the ${kConcurrency - 1} others`, async () => {
    const dir = buildSession(tasks());
    // $1000 per million tokens: $0.15 an answer; $2.9 is reached by the 20th.
    const run = await budgetRun(dir, { maxCostUsd: 2.9, endpointConcurrency: kConcurrency });
    console.log(`budget race (endpoint ${kConcurrency}): ${run.requests} requests, $${(run.tokens * 1000 / 1e6).toFixed(2)} for a budget of $2.90, ${run.completed} completed, ${run.pending} pending, ${run.spentAtStarts.length} starts`);
    expect(run.summary.exitCode).toBe(1);
    expect(run.spentAtStarts.filter((spent) => spent.cost >= 2.9)).toEqual([]);
    // The first 64 go out at once; each one out when the 20th answer came finishes.
    expect(run.requests).toBeGreaterThanOrEqual(20);
    expect(run.requests).toBeLessThanOrEqual(20 + kConcurrency - 1);
    expect(run.completed).toBe(run.requests);
    expect(run.pending).toBe(kTasks - run.completed);
  });
});
