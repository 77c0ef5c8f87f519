import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

/**
 * A hand-edited, forged and torn usage.ndjson through every reader: status, status --json,
 * context.md, the budget of a resume and report.html. None crashes; each bad line is said
 * with its number and not counted; a forged negative line lowers no budget.
 */

let server: FakeOpenAiServer;
beforeEach(async () => {
  // 120 prompt + 30 completion tokens per answer.
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const model = () => ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--price-input', '1000', '--price-output', '1000'];
const line = (task: string, extra: Record<string, unknown>) =>
  JSON.stringify({ ts: '2025-01-01T00:00:00.000Z', task, attempt: 7, request: 1, kind: 'first', model: 'm', prompt_tokens: 120, completion_tokens: 30, cached_tokens: 0, reported: true, cost_usd: 0.15, ...extra });

/** What follows the two good lines of the first run (lines 1 and 2). */
const kHostile = [
  '{"ts":"2025-01-01T00:00:00.000Z","task":"A","prompt_tokens":12', // 3: edited to bad JSON
  line('A', { prompt_tokens: -1_000_000, completion_tokens: -1_000_000, cost_usd: -1000 }), // 4: negative
  line('A', { prompt_tokens: 1e300 }), // 5: huge
  line('A', { completion_tokens: '30' }), // 6: a string
  line('GHOST', {}), // 7: a task tasks.csv does not hold
  line('GHOST', {}), // 8: the same line again
  line('A\u001b[2J', {}), // 9: an id with a terminal escape
];

describe('a hand-edited or torn usage.ndjson', () => {
  test('status, status --json, context.md, the budget of a resume and report.html take it: bad lines said and not counted, none lowers the budget', async () => {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'writer' },
      { id: 'B', description: 'second', role: 'writer' },
      { id: 'C', description: 'third', role: 'writer', deps: 'B' },
    ]);
    // Two tasks done, C left pending: A and B spent 300 tokens ($0.30), then the budget stopped the run.
    const first = await runCli('run', dir, ...model(), '--concurrency', '2', '--max-tokens-total', '300');
    expect(first.code).toBe(1);
    expect(server.requests).toHaveLength(2);
    const usagePath = join(dir, 'usage.ndjson');
    appendFileSync(usagePath, `${kHostile.join('\n')}\n{"ts":"2025-01-01T00:00:01.000Z","task":"B","prompt_tok`);
    // Line 10, cut short with no end of line, as a kill or a full disk leaves it.

    // The counted spend: A and B (300 tokens, $0.30) and GHOST once (150, $0.15).
    const status = await runCli('status', dir);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('Tokens: 360 prompt, 90 completion');
    expect(status.stdout).toContain('Cost: $0.45 (3 request(s))');
    expect(status.stdout).toContain('usage.ndjson names 1 task(s) tasks.csv does not hold (GHOST): their tokens and cost are in the totals');
    const said = status.stderr.split('\n').filter((text) => text !== '');
    expect(said.map((text) => /^status: usage\.ndjson line (\d+): /.exec(text)?.[1])).toEqual(['3', '4', '5', '6', '8', '9', '10']);
    expect(said[1]).toContain('prompt_tokens is -1000000, not a whole number of tokens from 0 to 100000000: not counted.');
    expect(said[4]).toContain('the same request as line 7: counted once.');
    expect(said[5]).toContain('task is "A\\u001b[2J", not a task id');
    expect(said[6]).toContain('It has no end of line');
    // Nothing a terminal would act on reaches it.
    expect(`${status.stdout}${status.stderr}`).not.toMatch(/\u001b/);

    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as {
      usage: { prompt: number; completion: number; requests: number; cost_usd: number; tasks: Record<string, unknown>; problems: { line: number; problem: string }[] };
    };
    expect(json.usage).toMatchObject({ prompt: 360, completion: 90, requests: 3 });
    expect(json.usage.cost_usd).toBeCloseTo(0.45, 10);
    expect(Object.keys(json.usage.tasks).sort()).toEqual(['A', 'B', 'GHOST']);
    expect(json.usage.problems.map((problem) => problem.line)).toEqual([3, 4, 5, 6, 8, 9, 10]);

    // The resume counts the same 450 tokens: with --max-tokens-total 450 it stops at once; the warnings name the lines.
    const stopped = await runCli('resume', dir, ...model(), '--max-tokens-total', '450');
    expect(stopped.code).toBe(1);
    expect(`${stopped.stdout}${stopped.stderr}`).toMatch(/Halted: the session's model calls spent 450 tokens, the budget of --max-tokens-total 450/);
    expect(stopped.stderr).toContain('usage.ndjson line 4: prompt_tokens is -1000000');
    expect(server.requests).toHaveLength(2);
    const context = readFileSync(join(dir, 'context.md'), 'utf8');
    expect(context).toContain('360 prompt and 90 completion tokens in all, in 3 request(s).');
    expect(context).toContain('- usage.ndjson line 4: prompt_tokens is -1000000');
    expect(context).toContain('| GHOST (not in tasks.csv) | 1 | 120 | 0 | 30 | $0.15 |');
    expect(context).not.toMatch(/\u001b/);

    // report.html is written and shows the counted tokens.
    const report = await runCli('report', dir);
    expect(report.code, report.stderr).toBe(0);
    const data = JSON.parse((await runCli('report', dir, '--json')).stdout) as { tokens: { prompt: number; completion: number; requests: number; cost_usd: number } };
    expect(data.tokens).toMatchObject({ prompt: 360, completion: 90, requests: 3, cached: 0, unpriced: 0 });
    expect(data.tokens.cost_usd).toBeCloseTo(0.45, 10);

    // A run with room left runs C: its line is whole, on a line of its own after the cut one.
    const more = await runCli('resume', dir, ...model(), '--max-tokens-total', '10000');
    expect(more.code, more.stderr).toBe(0);
    expect(readRows(dir).get('C')?.status).toBe('completed');
    const last = readFileSync(usagePath, 'utf8').split('\n').at(-2)!;
    expect(JSON.parse(last)).toMatchObject({ task: 'C', prompt_tokens: 120, completion_tokens: 30 });
    const after = JSON.parse((await runCli('status', dir, '--json')).stdout) as { usage: { requests: number; problems: unknown[] } };
    expect(after.usage.requests).toBe(4);
    expect(after.usage.problems).toHaveLength(7);
  });

  test('a forged line of negative counts takes no spent tokens away: the resume stops at once', async () => {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'writer' },
      { id: 'B', description: 'second', role: 'writer', deps: 'A' },
    ]);
    const first = await runCli('run', dir, ...model(), '--max-tokens-total', '150');
    expect(first.code).toBe(1);
    expect(server.requests).toHaveLength(1);
    appendFileSync(join(dir, 'usage.ndjson'), `${line('A', { prompt_tokens: -1_000_000, completion_tokens: 0, cost_usd: -1000 })}\n`);
    const resumed = await runCli('resume', dir, ...model(), '--max-tokens-total', '150');
    expect(resumed.code).toBe(1);
    expect(`${resumed.stdout}${resumed.stderr}`).toMatch(/Halted: the session's model calls spent 150 tokens/);
    expect(server.requests).toHaveLength(1);
    const costly = await runCli('resume', dir, ...model(), '--max-cost', '0.15');
    expect(costly.code).toBe(1);
    expect(`${costly.stdout}${costly.stderr}`).toMatch(/Halted: the session's model calls cost \$0\.15/);
    expect(server.requests).toHaveLength(1);
  });
});
