import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runSession } from '../../src/run/run-session.js';
import { readAttempts } from '../../src/knowledge/attempt-lines.js';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, type RowInput } from '../helpers/session-builder.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

// Issue 25 items 2 and 4 with model tasks: a cached answer spends no token, and says what it
// did not spend; a changed role template makes the tasks made from it stale.

let server: FakeOpenAiServer;
beforeEach(async () => {
  // 120 prompt and 30 completion tokens per answer.
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const kRows: RowInput[] = [
  { id: 'A', description: 'Write the plan', role: 'writer' },
  { id: 'B', description: 'Review the plan', role: 'writer', deps: 'A', context_from: 'A' },
  { id: 'C', description: 'Sum it up', role: 'writer', deps: 'B', context_from: 'B' },
];
/** US dollars of one answer at $1 per million prompt and $2 per million completion tokens. */
const kPerAnswer = (120 * 1 + 30 * 2) / 1e6;

const model = () => ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--price-input', '1', '--price-output', '2'];

describe('model tasks from the cache', () => {
  test('spend no token: no request, no usage line; the run, attempts.ndjson, status, context.md and report.html say what was not spent', async () => {
    const dir = buildSession(kRows);
    expect((await runCli('run', dir, ...model())).code).toBe(0);
    expect(server.requests).toHaveLength(3);
    const rerun = await runCli('rerun', dir, '--task', 'A', ...model());
    expect(rerun.code, rerun.stderr).toBe(0);
    // A asked the model again; B and C did not.
    expect(server.requests).toHaveLength(4);
    expect(usageLinesOf(dir).map((line) => line.task)).toEqual(['A', 'B', 'C', 'A']);
    expect(rerun.stdout).toMatch(/^\[CACHED\] B \(wave 2, from the cache, \$0\.00018 not spent\) -> Did the writer task\.$/m);
    expect(rerun.stdout).toContain('(2 task(s) from the cache, $0.00036 not spent)');
    const cached = readAttempts(dir).filter((line) => line.cached === true);
    expect(cached.map((line) => line.task)).toEqual(['B', 'C']);
    for (const line of cached) {
      expect(line.saved_usd).toBeCloseTo(kPerAnswer, 12);
      expect(line).toMatchObject({ prompt_tokens: 0, completion_tokens: 0 });
    }
    const status = await runCli('status', dir);
    expect(status.stdout).toContain('\n2 task(s) from the cache, $0.00036 not spent\n');
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as { cache: { tasks: number; saved_usd: number } };
    expect(json.cache.tasks).toBe(2);
    expect(json.cache.saved_usd).toBeCloseTo(2 * kPerAnswer, 12);
    expect(readFileSync(join(dir, 'context.md'), 'utf8')).toContain('This run took 2 task(s) from the cache, $0.00036 not spent.');
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('"cache":{"tasks":2,"saved_usd"');
    expect(html).toContain("fact('from the cache'");
  });

  test('a changed role template makes the tasks rendered from it [STALE], saying which template; rerun --stale asks the model again', async () => {
    const prompts = buildSession(null, { files: { 'generic/writer.md': 'Task {id}: {description}\n{prev_context}\n' } });
    const dir = buildSession(kRows);
    const executor = { type: 'openai', model: 'm', baseUrl: server.baseUrl, promptsDir: prompts } as const;
    expect((await runSession(dir, { executor })).exitCode).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect((await runCli('status', dir)).stdout).not.toContain('[STALE]');

    writeFileSync(join(prompts, 'generic', 'writer.md'), 'Task {id}, carefully: {description}\n{prev_context}\n');
    const template = join(prompts, 'generic', 'writer.md');
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as { stale?: Record<string, string[]> };
    expect(json.stale).toEqual({ A: [`the template ${template} changed`], B: [`the template ${template} changed`], C: [`the template ${template} changed`] });
    expect((await runCli('status', dir)).stdout.split('\n').find((line) => line.startsWith('[STALE] A '))).toMatch(/\(writer\) \[150 tokens, cost unknown\] -> the template \S+writer\.md changed$/);

    expect((await runSession(dir, { executor, rerun: { stale: true } })).exitCode).toBe(0);
    expect(server.requests).toHaveLength(6);
    expect(server.prompts().slice(3).every((prompt) => prompt.includes('carefully'))).toBe(true);
    expect((await runCli('status', dir)).stdout).not.toContain('[STALE]');
  });

  test('a built-in template is named by its place under prompts/', async () => {
    const dir = buildSession([{ id: 'I1', description: 'Ideas on buses', role: 'ideator' }], { session: { pipeline: 'brainstorm' } });
    expect((await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl)).code).toBe(0);
    // What the key holds of the template is its content: an edit of the built-in file is what makes it stale.
    const attempts = readAttempts(dir);
    expect(attempts.at(-1)!.key).toMatch(/^[0-9a-f]{64}$/);
    const { templateLabelOf } = await import('../../src/cache/session-keys.js');
    const label = templateLabelOf({ executor: { type: 'openai', model: 'm' }, workdir: 'session', limits: {}, prevContextCap: 16000 }, 'brainstorm', 'ideator', dir);
    expect(label).toBe('prompts/brainstorm/ideator.md');
  });
});
