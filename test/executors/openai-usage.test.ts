import { rmSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { OpenAiExecutor, type OpenAiExecutorOptions, type OpenAiOutcome } from '../../src/executors/openai/index.js';
import { requestUsage } from '../../src/executors/openai/request-usage.js';
import type { TaskInput } from '../../src/executors/types.js';
import type { PromptContext } from '../../src/knowledge/prompt-context.js';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeOpenAiServerOptions } from '../helpers/fake-openai-server.js';
import { buildSession } from '../helpers/session-builder.js';

const servers: FakeOpenAiServer[] = [];
const folders: string[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function server(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const started = await startFakeOpenAiServer({ slowMs: 'never', ...options });
  servers.push(started);
  return started;
}

function task(row: Record<string, string> = {}, prevContext = ''): TaskInput {
  const dir = buildSession(null, { prefix: 'csv-wave-usage-' });
  folders.push(dir);
  const full = { id: 'T-1', title: 'A task', description: 'Do the thing.', role: 'writer', deps: '', context_from: '', exec_mode: 'csv-wave', ...row };
  return { id: full.id, wave: 1, attempt: 1, session: dir, row: full, prev_context: prevContext, upstream: { deps: [], wisdom: {}, warnings: [] } };
}

const kNoContext: PromptContext = { pipeline: 'generic', topic: 'Usage', discoveries: '', upstream: '', wisdom: '' };

function run(executorToRun: OpenAiExecutor, input: TaskInput, context: Partial<PromptContext> = {}, timeoutMs = 30_000): Promise<OpenAiOutcome> {
  return executorToRun.run(input, { signal: new AbortController().signal, timeoutMs, prompt: { ...kNoContext, ...context } });
}

const exec = (at: FakeOpenAiServer) => executor(at);

function executor(at: FakeOpenAiServer, options: Partial<OpenAiExecutorOptions> = {}): OpenAiExecutor {
  return new OpenAiExecutor({ model: 'fake-model', baseUrl: at.baseUrl, apiKey: 'sk-usage-test-000000', ...options });
}

describe('every request of an attempt is counted', () => {
  test('a repaired answer: two requests, first and repair, each with its tokens and the cached ones', async () => {
    const at = await server({ cachedTokens: 100 });
    const outcome = await run(executor(at), task({ description: '[[fake:invalid-then-valid]]' }));
    expect(outcome.kind).toBe('result');
    const line = { model: 'fake-model', prompt_tokens: 120, completion_tokens: 30, cached_tokens: 100, reported: true };
    // Each request says how many characters it sent (the repair's messages hold the first answer and the problem too).
    const sent = at.requests.map((request) => request.body.messages!.reduce((sum, message) => sum + message.content.length, 0));
    expect(sent[1]).toBeGreaterThan(sent[0]!);
    expect(outcome.requests).toEqual([
      { request: 1, kind: 'first', ...line, prompt_chars: sent[0] },
      { request: 2, kind: 'repair', ...line, prompt_chars: sent[1] },
    ]);
    expect(outcome.usage).toEqual({ prompt_tokens: 240, completion_tokens: 60 });
  });

  test('a repair cut off (the run aborts it): the first request keeps its tokens, the repair is listed as unreported', async () => {
    const at = await server();
    const controller = new AbortController();
    const outcome = exec(at).run(task({ description: '[[fake:invalid-then-slow]]' }), { signal: controller.signal, timeoutMs: 0, prompt: kNoContext });
    // Aborted once the server holds the repair request: never by a clock.
    await vi.waitUntil(() => at.requests.length === 2, { timeout: 60_000, interval: 20 });
    controller.abort();
    const done = await outcome;
    expect(done).toMatchObject({ kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' });
    // The first request says how many characters it sent: estimate learns the server's characters per token from them.
    const sent = at.requests[0]!.body.messages!.reduce((sum, message) => sum + message.content.length, 0);
    expect(done.requests).toEqual([
      { request: 1, kind: 'first', model: 'fake-model', prompt_tokens: 120, completion_tokens: 30, cached_tokens: 0, reported: true, prompt_chars: sent },
      { request: 2, kind: 'repair', model: 'fake-model', prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reported: false },
    ]);
    expect(done.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30 });
  });

  test('an HTTP error is no request that cost tokens: nothing listed for it', async () => {
    const at = await server();
    const outcome = await run(executor(at), task({ description: '[[fake:server-error]]' }));
    expect(outcome).toMatchObject({ kind: 'error', errorClass: 'transient' });
    expect(outcome).not.toHaveProperty('requests');
  });
});

describe('cached prompt tokens', () => {
  const answer = (extra: Record<string, unknown>) =>
    ({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [], usage: { prompt_tokens: 500, completion_tokens: 20, total_tokens: 520 }, ...extra }) as never;

  test("an older llama.cpp server's timings.cache_n counts when prompt_tokens_details is missing; prompt_tokens_details wins when both are there", () => {
    expect(requestUsage(answer({ timings: { cache_n: 320, prompt_n: 180 } }), 1, 'first', 'm').cached_tokens).toBe(320);
    expect(requestUsage(answer({ timings: { cache_n: 320 }, usage: { prompt_tokens: 500, completion_tokens: 20, total_tokens: 520, prompt_tokens_details: { cached_tokens: 300 } } }), 1, 'first', 'm').cached_tokens).toBe(300);
    expect(requestUsage(answer({ timings: { cache_n: -1 } }), 1, 'first', 'm').cached_tokens).toBe(0);
    expect(requestUsage(answer({}), 1, 'first', 'm').cached_tokens).toBe(0);
  });
});

describe('--max-tokens: the name of the limit', () => {
  test('a compatible server gets both names; one that refuses max_tokens is asked again with max_completion_tokens only, which the executor then keeps', async () => {
    const at = await server({ refuseParams: ['max_tokens'] });
    const exec = executor(at, { maxTokens: 64 });
    expect((await run(exec, task())).kind).toBe('result');
    expect((await run(exec, task({ id: 'T-2' }))).kind).toBe('result');
    expect(at.requests.map((request) => [request.body.max_tokens, request.body.max_completion_tokens])).toEqual([
      [64, 64],
      [undefined, 64],
      [undefined, 64],
    ]);
  });

  test('a server that knows only max_tokens (refuses max_completion_tokens) keeps getting max_tokens alone', async () => {
    const at = await server({ refuseParams: ['max_completion_tokens'] });
    const exec = executor(at, { maxTokens: 64 });
    expect((await run(exec, task())).kind).toBe('result');
    expect((await run(exec, task({ id: 'T-2' }))).kind).toBe('result');
    expect(at.requests.map((request) => [request.body.max_tokens, request.body.max_completion_tokens])).toEqual([
      [64, 64],
      [64, undefined],
      [64, undefined],
    ]);
  });

  test('a server that refuses both: the second refusal fails the task, after two requests', async () => {
    const at = await server({ refuseParams: ['max_tokens', 'max_completion_tokens'] });
    const outcome = await run(executor(at, { maxTokens: 64 }), task());
    expect(outcome).toMatchObject({ kind: 'error', errorClass: 'task-failure', error: expect.stringContaining('max_completion_tokens') });
    expect(at.requests).toHaveLength(2);
  });
});

describe('--context-window: prompts cut to fit', () => {
  const big = (label: string, chars: number) => `${label} `.repeat(Math.ceil(chars / (label.length + 1))).slice(0, chars);

  test('with a known window, {upstream} is cut first, with a marker, and the attempt says so', async () => {
    const at = await server({ contextTokens: 4000 });
    const exec = executor(at, { contextWindow: 4000, maxTokens: 500 });
    const outcome = await run(exec, task(), { upstream: big('upstream', 20_000), discoveries: big('board', 1000) });
    expect(outcome.kind).toBe('result');
    expect(at.requests).toHaveLength(1);
    const prompt = at.prompts()[0]!;
    expect(prompt).toMatch(/\[… cut to fit the model's context window: \d+ of 20000 characters kept\]/);
    // The board was small enough to stay whole once upstream was cut.
    expect(prompt).toContain(big('board', 1000));
    expect(outcome.notes).toEqual([expect.stringMatching(/^\{upstream\} cut to fit the model's context window: \d+ of 20000 characters kept$/)]);
  });

  test('the cuts go upstream, discoveries, wisdom, then prev_context, as far as needed', async () => {
    const at = await server({ contextTokens: 2000 });
    const exec = executor(at, { contextWindow: 2000, maxTokens: 200 });
    const outcome = await run(exec, task({}, big('previous', 6000)), { upstream: big('upstream', 3000), discoveries: big('board', 3000), wisdom: big('lesson', 3000) });
    expect(outcome.kind).toBe('result');
    expect(outcome.notes?.map((note) => /^\{(\w+)\}/.exec(note)?.[1])).toEqual(['upstream', 'discoveries', 'wisdom', 'prev_context']);
  });

  test('no window given: the server\'s 400 (llama.cpp\'s words) tells it, and the prompt is cut and sent again', async () => {
    const at = await server({ contextTokens: 3000, contextStyle: 'llama' });
    const exec = executor(at);
    const outcome = await run(exec, task(), { upstream: big('upstream', 30_000) });
    expect(outcome.kind).toBe('result');
    expect(at.requests).toHaveLength(2);
    expect(outcome.notes?.[0]).toMatch(/^\{upstream\} cut/);
    // Learned for the executor's later attempts: no refused request any more.
    expect((await run(exec, task({ id: 'T-2' }), { upstream: big('upstream', 30_000) })).kind).toBe('result');
    expect(at.requests).toHaveLength(3);
  });

  test("OpenAI's words for the same refusal are understood too", async () => {
    const at = await server({ contextTokens: 3000, contextStyle: 'openai' });
    const outcome = await run(executor(at), task(), { discoveries: big('board', 30_000) });
    expect(outcome.kind).toBe('result');
    expect(outcome.notes?.[0]).toMatch(/^\{discoveries\} cut/);
  });

  test('the cut text tokenizes looser than the kept text: each 400 is learned from and the prompt fitted again until it fits', async () => {
    // '#' is a token each (dense, as code or another script is); other text is 8 characters a token.
    const countTokens = (text: string) => {
      const dense = text.split('#').length - 1;
      return dense + Math.ceil((text.length - dense) / 8);
    };
    const at = await server({ contextTokens: 3000, countTokens });
    // A small answer reserve leaves most of the window to the prompt, where the looser cut text misleads the estimate.
    const outcome = await run(executor(at, { maxTokens: 16 }), task({ description: '#'.repeat(2000) }), { upstream: big('upstream', 30_000) });
    expect(outcome.kind).toBe('result');
    // The first refit was still over the window (what failed the task before): a third request fitted.
    expect(at.requests.length).toBeGreaterThanOrEqual(3);
    const sent = at.requests.at(-1)!.body.messages ?? [];
    expect(sent.reduce((sum, message) => sum + countTokens(message.content), 0)).toBeLessThanOrEqual(3000);
    expect(outcome.notes?.[0]).toMatch(/^\{upstream\} cut to fit the model's context window: \d+ of 30000 characters kept$/);
  });

  test('a server that refuses every fitted prompt: the refits are bounded, and the attempt fails with its 400', async () => {
    // Every prompt but a near-empty one is over: the server's counts never let a prompt fit.
    const at = await server({ contextTokens: 3000, countTokens: (text) => (text.length > 200 ? 4000 : 1) });
    const outcome = await run(executor(at), task(), { upstream: big('upstream', 30_000) });
    expect(outcome.kind).toBe('error');
    expect(at.requests.length).toBeLessThanOrEqual(4);
  });

  test("a task whose own text does not fit fails (not retried) with the sizes, and sends nothing once the window is known", async () => {
    const at = await server({ contextTokens: 1000 });
    const outcome = await run(executor(at, { contextWindow: 1000 }), task({ description: big('own', 20_000) }));
    expect(outcome).toMatchObject({ kind: 'error', errorClass: 'task-failure' });
    if (outcome.kind !== 'error') return;
    expect(outcome.error).toMatch(/own prompt does not fit the model's context window: about \d+ tokens/);
    expect(outcome.error).toContain('1000-token window');
    expect(at.requests).toHaveLength(0);
  });
});
