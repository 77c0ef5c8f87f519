import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { statusOf } from '../../src/core/skip-cause.js';
import { runCli } from '../helpers/cli.js';
import { readRows } from '../helpers/session-builder.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
import { modelSession } from '../helpers/model-server/model-session.js';
import { expectEndedByTheRules, expectUsageLinesAsServed } from '../helpers/model-server/session-checks.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function sessionDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'csv-wave-model-')), 'session');
}

async function initSession(template: 'brainstorm' | 'analyze', url: string): Promise<string> {
  const dir = sessionDir();
  const init = await runCli('init', dir, '--template', template, '--topic', 'Cheaper public transport', '--executor', 'openai', '--model', 'stories260K', '--base-url', url);
  expect(init.code, init.stderr).toBe(0);
  return dir;
}

describe.skipIf(model === undefined)('token limits and budgets against a real model', () => {
  test('--max-tokens reaches the server on every request, repairs included, and usage.ndjson has one line per request with the server’s own counts', async () => {
    server = await startModelServer({ model: model! });
    // 8 tokens cut every answer short of valid JSON: each task sends its first request and
    // its repair, then fails as invalid-output. One sequence keeps the prompts' common start cached.
    const dir = modelSession(server.url, [
      { id: 'A', title: 'A', description: 'Name a colour.', role: 'worker' },
      { id: 'B', title: 'B', description: 'Name an animal.', role: 'worker' },
    ]);
    const run = await runCli('run', dir, '--max-tokens', '8');
    expect(run.code, run.stderr).toBe(1);
    expect(server.log.records.map((record) => `${record.task}${record.repair ? ' repair' : ''}`).sort()).toEqual(['A', 'A repair', 'B', 'B repair']);
    for (const record of server.log.records) {
      expect(record.limit, `request ${record.n}`).toBe(8);
      expect(record.usage!.completion_tokens).toBeLessThanOrEqual(8);
    }
    expectEndedByTheRules(dir, server.log, run.code);
    expectUsageLinesAsServed(dir, server.log);
  });

  test('--max-tokens-total stops starting model tasks once reached: exit 1, the rest pending; resume goes on counting from usage.ndjson', async () => {
    server = await startModelServer({ model: model! });
    const dir = modelSession(server.url, [
      { id: 'A', title: 'A', description: 'Name a colour.', role: 'worker' },
      { id: 'B', title: 'B', description: 'Name an animal.', role: 'worker' },
    ]);
    // One task at a time: the first task's requests spend the budget, and nothing else starts.
    const run = await runCli('run', dir, '--concurrency', '1', '--endpoint-concurrency', '1', '--max-tokens', '8', '--max-tokens-total', '1');
    expect(run.code, run.stderr).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/Halted/);
    const first = server.log.records[0]!.task;
    expect(server.log.records.map((record) => record.task)).toEqual(server.log.records.map(() => first));
    const rows = [...readRows(dir).values()];
    expect(rows.filter((row) => statusOf(row) === 'pending').length).toBe(rows.length - 1);

    // The budget counts what usage.ndjson holds: resumed with the same budget, nothing is sent.
    const sent = server.log.records.length;
    const again = await runCli('resume', dir, '--max-tokens', '8', '--max-tokens-total', '1');
    expect(again.code, again.stderr).toBe(1);
    expect(server.log.records.length).toBe(sent);

    const resumed = await runCli('resume', dir, '--max-tokens', '8', '--max-tokens-total', '100000000');
    expect([0, 1], resumed.stderr).toContain(resumed.code);
    expect(new Set(server.log.records.map((record) => record.task))).toEqual(new Set(['A', 'B']));
    expectEndedByTheRules(dir, server.log, resumed.code);
    expectUsageLinesAsServed(dir, server.log);
  });

  test('a prompt over the server’s context is refused with its 400, then sent again with the digests cut to fit the window it named', async () => {
    // A small window: the prompt that fits it is evaluated once or twice (a repair), and its
    // cost grows with the square of its length. csv-wave's own text (about 1,800 tokens) fits.
    server = await startModelServer({ model: model!, contextSize: 2560, defaultMaxTokens: 48 });
    const story = 'Once upon a time there was a little dog who liked to run in the park with his friends. '.repeat(60);
    const dir = modelSession(server.url, [
      { id: 'A', title: 'Earlier', description: 'Done before.', role: 'worker', status: 'completed', findings: story },
      { id: 'B', title: 'Next', description: 'Sum up what A found.', role: 'worker', deps: 'A', context_from: 'A' },
    ]);
    const run = await runCli('run', dir, '--max-tokens', '48');
    expect([0, 1], run.stderr).toContain(run.code);
    // Refused once or more (the cut text may tokenize looser than the text kept: each 400 is learned from),
    // then answered: the task completes on a prompt inside the window.
    const firstAnswered = server.log.records.findIndex((record) => record.status === 200);
    expect(firstAnswered).toBeGreaterThanOrEqual(1);
    for (const refused of server.log.records.slice(0, firstAnswered)) {
      expect(refused).toMatchObject({ task: 'B', status: 400 });
      expect(refused.error).toBe('the request exceeds the available context size, try increasing it');
    }
    for (const record of server.log.records.slice(firstAnswered)) {
      expect(record.status).toBe(200);
      expect(record.usage!.prompt_tokens).toBeLessThan(server.contextSize);
    }
    expect(run.stderr).toMatch(/B: \{(upstream|prev_context|discoveries|wisdom)\} cut to fit the model's context window/);
    // The tiny model's answer may still be unusable after its repair; the context is no longer the reason.
    const b = readRows(dir).get('B')!;
    expect(['completed', 'failed'], b.error).toContain(b.status);
    expect(b.error).not.toMatch(/context/);
  });

  test('a task whose own text does not fit the context fails, naming the sizes; nothing is retried', async () => {
    server = await startModelServer({ model: model!, contextSize: 512, defaultMaxTokens: 48 });
    const dir = await initSession('analyze', server.url);
    const run = await runCli('run', dir, '--auto');
    expect(run.code).toBe(1);
    expect(server.log.answered().filter((record) => record.status === 200)).toEqual([]);
    expect(server.log.records.length).toBeGreaterThanOrEqual(1);
    for (const record of server.log.records) expect(record.status).toBe(400);
    const failed = [...readRows(dir).values()].filter((row) => row.status === 'failed');
    expect(failed.length).toBeGreaterThanOrEqual(1);
    for (const row of failed) expect(row.error, row.id).toMatch(new RegExp(`${server.contextSize}-token window`));
  });
});
