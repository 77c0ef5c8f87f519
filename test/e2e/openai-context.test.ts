import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

let server: FakeOpenAiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A board of 30 discoveries with long titles: a digest of about 3,700 characters in every prompt. */
function board(): string {
  return Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', worker: 'OLD', type: 'idea', data: { title: `Idea ${i} ${'with a long title '.repeat(7)}` } }),
  ).join('\n');
}

test("a window learned from the server's 400: the digest is cut, the task completes, and the run warns naming the task", async () => {
  // About 850 tokens of its own (template, row, system prompt) and 900 of board at 4 characters a token.
  server = await startFakeOpenAiServer({ contextTokens: 1400 });
  const dir = buildSession([{ id: 'T-1', description: 'Summarise the board', role: 'writer' }], { files: { 'discoveries.ndjson': `${board()}\n` } });
  const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--max-tokens', '100');
  expect(run.code, run.stderr).toBe(0);
  expect(readRows(dir).get('T-1')!.status).toBe('completed');
  expect(run.stderr).toMatch(/T-1: \{discoveries\} cut to fit the model's context window: \d+ of \d+ characters kept/);
  // The refused request, then the one that fitted, with the marker where the board was cut.
  expect(server.requests).toHaveLength(2);
  expect(server.prompts()[1]).toMatch(/\[… cut to fit the model's context window: \d+ of \d+ characters kept\]/);
  // The refused request cost nothing the server told of: one usage line, the answer's.
  expect(readFileSync(join(dir, 'usage.ndjson'), 'utf8').trim().split('\n')).toHaveLength(1);
});

test('a task whose own text does not fit the window fails as task-failure naming the sizes, without a retry', async () => {
  server = await startFakeOpenAiServer({ contextTokens: 1400 });
  const dir = buildSession([{ id: 'BIG', description: 'word '.repeat(3000), role: 'writer' }]);
  const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--context-window', '1400');
  expect(run.code).toBe(1);
  const row = readRows(dir).get('BIG')!;
  expect(row.status).toBe('failed');
  expect(row.error).toMatch(/own prompt does not fit the model's context window: about \d+ tokens .* 1400-token window/);
  expect(server.requests).toHaveLength(0);
});
