import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Budget } from '../../src/knowledge/budget.js';
import { appendUsageLines, readUsage, usageLines, type RequestUsage } from '../../src/knowledge/usage.js';
import { UsageWriter } from '../../src/session/usage-writer.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

/**
 * usage.ndjson as a reader must take it: cut short by a kill or a full disk, edited by
 * hand, forged. A bad line is said (its number, what is wrong) and not counted; a line
 * written twice is counted once; no line takes spent tokens or money away.
 */

const request = (overrides: Partial<RequestUsage> = {}): RequestUsage => ({
  request: 1,
  kind: 'first',
  model: 'm',
  prompt_tokens: 100,
  completion_tokens: 20,
  cached_tokens: 0,
  reported: true,
  ...overrides,
});

function usageDir(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-usage-file-'));
  writeFileSync(join(dir, 'usage.ndjson'), text);
  return dir;
}

const good = (task: string, attempt: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ts: `2025-01-01T00:00:0${attempt}.000Z`, task, attempt, request: 1, kind: 'first', model: 'm', prompt_tokens: 100, completion_tokens: 20, cached_tokens: 0, reported: true, cost_usd: 0.001, ...extra });

describe('readUsage of a hand-edited or torn usage.ndjson', () => {
  test('each kind of bad line is said by its number and not counted; the good lines are', () => {
    const lines = [
      good('A', 1),
      '{"ts": "2025-01-01T00:00:00.000Z", "task": "B", oops',
      good('B', 1, { prompt_tokens: -100000 }),
      good('B', 2, { completion_tokens: 1e300 }),
      good('B', 3, { prompt_tokens: '120' }),
      good('B', 4, { prompt_tokens: 1.5 }),
      good('B', 5, { cost_usd: -50 }),
      good('B', 6, { cost_usd: 1e308 }),
      good('B\u001b]0;owned\u0007', 7),
      '[1, 2, 3]',
      good('GHOST', 1),
      good('A', 1),
      '{"ts":"2025-01-01T00:00:09.000Z","task":"A","prompt_tok',
    ];
    const totals = readUsage(usageDir(lines.join('\n')))!;
    // A, GHOST: two lines of 100 + 20 tokens at $0.001.
    expect(totals).toMatchObject({ prompt_tokens: 200, completion_tokens: 40, requests: 2, unpriced: 0 });
    expect(totals.cost_usd).toBeCloseTo(0.002, 12);
    expect([...totals.byTask.keys()]).toEqual(['A', 'GHOST']);
    expect(totals.problems.map((problem) => problem.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13]);
    const said = new Map(totals.problems.map((problem) => [problem.line, problem.problem]));
    expect(said.get(2)).toMatch(/^not JSON .*: not counted\.$/);
    expect(said.get(3)).toBe('prompt_tokens is -100000, not a whole number of tokens from 0 to 100000000: not counted.');
    expect(said.get(4)).toMatch(/^completion_tokens is 1e\+300, not a whole number/);
    expect(said.get(5)).toMatch(/^prompt_tokens is "120", not a whole number/);
    expect(said.get(6)).toMatch(/^prompt_tokens is 1\.5, not/);
    expect(said.get(7)).toMatch(/^cost_usd is -50, not a number of US dollars from 0 to 1000000/);
    expect(said.get(8)).toMatch(/^cost_usd is 1e\+308, not/);
    // The forged id is shown escaped: no terminal acts on it.
    expect(said.get(9)).toBe('task is "B\\u001b]0;owned\\u0007", not a task id: not counted.');
    expect(said.get(10)).toMatch(/^not a JSON object/);
    expect(said.get(12)).toBe('the same request as line 1: counted once.');
    expect(said.get(13)).toMatch(/^not JSON .* It has no end of line: its writing was cut short\.$/);
  });

  test('a forged negative line can not lower the budget: the session spent what its good lines say', () => {
    const dir = usageDir(`${good('A', 1, { prompt_tokens: 250, completion_tokens: 50, cost_usd: 0.3 })}\n${good('B', 1, { prompt_tokens: -1000000, completion_tokens: 0, cost_usd: -5 })}\n`);
    const totals = readUsage(dir);
    expect(new Budget({ maxTokensTotal: 300 }, totals).reached()).toMatch(/spent 300 tokens, the budget of --max-tokens-total 300/);
    expect(new Budget({ maxCostUsd: 0.3 }, totals).reached()).toMatch(/cost \$0\.30, the budget of --max-cost 0\.3/);
  });

  test('a batch answer written twice is counted once; the same request number of two runs counts twice', () => {
    const batchLine = (ts: string) => good('A', 1, { ts, batch: true, batch_id: 'batch_1', custom_id: 'A/a1/r1' });
    const dir = usageDir([batchLine('2025-01-01T00:00:01.000Z'), batchLine('2025-01-01T00:05:00.000Z'), good('B', 1), good('B', 1, { ts: '2025-01-02T00:00:00.000Z' })].join('\n') + '\n');
    const totals = readUsage(dir)!;
    expect(totals.byTask.get('A')?.requests).toBe(1);
    expect(totals.byTask.get('B')?.requests).toBe(2);
    expect(totals.problems).toEqual([{ line: 2, problem: 'the same batch answer as line 1: counted once.' }]);
  });

  test('a line appended after a cut last line is whole: a new line goes first', () => {
    const dir = usageDir(`${good('A', 1)}\n{"ts":"2025-01-01T00:00:02.000Z","task":"A","prompt_to`);
    appendUsageLines(new SessionWriter(dir), usageLines('B', 1, [request()]));
    const text = readFileSync(join(dir, 'usage.ndjson'), 'utf8');
    expect(text.split('\n').at(-2)).toMatch(/^\{"ts":"[^"]+","task":"B"/);
    const totals = readUsage(dir)!;
    expect([...totals.byTask.keys()]).toEqual(['A', 'B']);
    expect(totals.problems.map((problem) => problem.line)).toEqual([2]);
  });
});

describe('UsageWriter and batch answers', () => {
  test('a batch answer usage.ndjson holds (a run wrote it, then was killed before the result was journaled) is not written again', () => {
    const dir = usageDir(`${good('A', 1, { batch: true, batch_id: 'batch_1', custom_id: 'A/a1/r1' })}\n`);
    const told: string[] = [];
    const writer = new UsageWriter({ files: new SessionWriter(dir), warn: () => {}, onUsage: (lines) => told.push(...lines.map((line) => line.task)) });
    writer.reply('A', 1, [request({ batch: true, batch_id: 'batch_1', custom_id: 'A/a1/r1' })]);
    writer.reply('B', 1, [request({ batch: true, batch_id: 'batch_1', custom_id: 'B/a1/r1' })]);
    // A second copy of one answer in one run is not written either.
    writer.reply('B', 2, [request({ batch: true, batch_id: 'batch_1', custom_id: 'B/a1/r1' })]);
    writer.reply('C', 1, [request()]);
    expect(told).toEqual(['B', 'C']);
    const totals = readUsage(dir)!;
    expect([...totals.byTask].map(([task, sum]) => `${task} ${sum.requests}`)).toEqual(['A 1', 'B 1', 'C 1']);
    expect(totals.problems).toEqual([]);
  });
});
