import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { readRows, tasksCsv } from '../helpers/generic-session.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
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
  test('--max-tokens reaches the server on every request, and usage.ndjson has one line per request, repairs included, with the server’s own counts', async () => {
    server = await startModelServer({ model: model!, sequences: 2 });
    const dir = await initSession('brainstorm', server.url);
    const run = await runCli('run', dir, '--max-tokens', '48');
    expect([0, 1], run.stderr).toContain(run.code);
    expect(server.log.records.length).toBeGreaterThan(0);
    for (const record of server.log.records) {
      expect(record.limit, `request ${record.n}`).toBe(48);
      expect(record.usage!.completion_tokens).toBeLessThanOrEqual(48);
    }
    expectEndedByTheRules(dir, server.log, run.code);
    expectUsageLinesAsServed(dir, server.log);
  });

  test('--max-tokens-total stops starting model tasks once reached: exit 1, the rest pending; resume goes on counting from usage.ndjson', async () => {
    server = await startModelServer({ model: model!, defaultMaxTokens: 48 });
    const dir = await initSession('analyze', server.url);
    // One task at a time: the first task's requests spend the budget, and nothing else starts.
    const run = await runCli('run', dir, '--auto', '--concurrency', '1', '--endpoint-concurrency', '1', '--max-tokens-total', '1');
    expect(run.code, run.stderr).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/Halted/);
    const first = server.log.records[0]!.task;
    expect(server.log.records.map((record) => record.task)).toEqual(server.log.records.map(() => first));
    const rows = [...readRows(dir).values()];
    expect(rows.filter((row) => row.status === 'pending').length).toBe(rows.length - 1);

    // The budget counts what usage.ndjson holds: resumed with the same budget, nothing is sent.
    const sent = server.log.records.length;
    const again = await runCli('resume', dir, '--auto', '--max-tokens-total', '1');
    expect(again.code, again.stderr).toBe(1);
    expect(server.log.records.length).toBe(sent);

    const resumed = await runCli('resume', dir, '--auto', '--max-tokens-total', '100000000');
    expect([0, 1], resumed.stderr).toContain(resumed.code);
    expectEndedByTheRules(dir, server.log, resumed.code);
    expectUsageLinesAsServed(dir, server.log);
  });

  test('a prompt over the server’s context is refused with its 400, then sent again with the digests cut to fit the window it named', async () => {
    server = await startModelServer({ model: model!, contextSize: 4096, defaultMaxTokens: 48 });
    const dir = sessionDir();
    mkdirSync(dir, { recursive: true });
    const story = 'Once upon a time there was a little dog who liked to run in the park with his friends. '.repeat(140);
    writeFileSync(join(dir, 'tasks.csv'), tasksCsv([
      { id: 'A', title: 'Earlier', description: 'Done before.', role: 'worker', status: 'completed', findings: story },
      { id: 'B', title: 'Next', description: 'Sum up what A found.', role: 'worker', deps: 'A', context_from: 'A' },
    ]));
    writeFileSync(join(dir, 'session.json'), JSON.stringify({ pipeline: 'generic', executor: { type: 'openai', model: 'stories260K', base_url: server.url } }));
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
