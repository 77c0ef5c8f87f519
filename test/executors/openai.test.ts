import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { OpenAiExecutor, parseRetryAfter, renderPrompt, type OpenAiExecutorOptions, type OpenAiOutcome } from '../../src/executors/openai/index.js';
import type { ExecutorRunOptions, TaskInput } from '../../src/executors/types.js';
import { buildPromptContext } from '../../src/knowledge/prompt-context.js';
import type { UpstreamContext } from '../../src/knowledge/upstream.js';
import { taskResultSchema } from '../../src/schema/result.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession } from '../helpers/session-builder.js';

const kKey = 'sk-test-KEY-1234567890';

let server: FakeOpenAiServer;
const folders: string[] = [];

beforeAll(async () => {
  // A slow answer never comes: a timeout or an abort is then the only way a call ends.
  server = await startFakeOpenAiServer({ slowMs: 'never' });
});
afterAll(async () => {
  await server.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
  vi.unstubAllEnvs();
});

function session(config: Record<string, unknown> | null = { pipeline: 'brainstorm', topic: 'Developer tooling for microservices' }, files: Record<string, string> = {}): string {
  const dir = buildSession(null, { session: config, files, prefix: 'csv-wave-openai-' });
  folders.push(dir);
  return dir;
}

const kNoUpstream: UpstreamContext = { deps: [], wisdom: {}, warnings: [] };

function task(dir: string, row: Record<string, string> = {}, extra: Partial<TaskInput> = {}): TaskInput {
  const full = {
    id: 'IDEA-001',
    title: 'Multi-angle idea generation',
    description: 'Generate 3+ ideas per angle.',
    role: 'ideator',
    angle: 'Technical',
    gc_round: '0',
    deps: '',
    context_from: '',
    exec_mode: 'csv-wave',
    ...row,
  };
  return { id: full.id, wave: 1, attempt: 1, session: dir, row: full, prev_context: '', upstream: kNoUpstream, ...extra };
}

function executor(options: Partial<OpenAiExecutorOptions> = {}): OpenAiExecutor {
  return new OpenAiExecutor({ model: 'fake-model', baseUrl: server.baseUrl, apiKey: kKey, ...options });
}

/** Runs an attempt with the prompt context the engine reads for it on its main thread. */
function run(exec: OpenAiExecutor, input: TaskInput, options: Partial<ExecutorRunOptions> = {}): Promise<OpenAiOutcome> {
  const path = join(input.session, 'session.json');
  const config = (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {}) as { pipeline?: string; topic?: string };
  const prompt = buildPromptContext(input.session, { pipeline: config.pipeline ?? 'brainstorm', topic: config.topic ?? '' }, input.upstream);
  return exec.run(input, { signal: new AbortController().signal, timeoutMs: 30_000, prompt, ...options });
}

function expectError(outcome: OpenAiOutcome, errorClass: string): Extract<OpenAiOutcome, { kind: 'error' }> {
  expect(outcome.kind).toBe('error');
  if (outcome.kind !== 'error') throw new Error('unreachable');
  expect(outcome.errorClass).toBe(errorClass);
  return outcome;
}

describe('OpenAiExecutor: results', () => {
  test('a role answer becomes the result, with the tokens spent', async () => {
    const outcome = await run(executor(), task(session()));
    expect(outcome.kind).toBe('result');
    if (outcome.kind !== 'result') return;
    const parsed = taskResultSchema.parse(outcome.result);
    expect(parsed).toMatchObject({ id: 'IDEA-001', status: 'completed' });
    expect(parsed.discoveries?.map((discovery) => discovery.type)).toEqual(['idea', 'idea']);
    expect(outcome.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30 });
    expect(server.requests).toHaveLength(1);
  });

  test('the request: model, system and user messages, the result schema, no retries of its own', async () => {
    await run(executor({ maxTokens: 2048 }), task(session()));
    const request = server.requests[0]!;
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.body.model).toBe('fake-model');
    expect(request.body.messages?.map((message) => message.role)).toEqual(['system', 'user']);
    expect(request.body.response_format?.type).toBe('json_schema');
    expect(request.body.response_format?.json_schema?.name).toBe('task_result');
    expect(request.body.response_format?.json_schema?.strict).toBe(false);
    const schema = request.body.response_format?.json_schema?.schema as { properties?: Record<string, unknown> };
    expect(Object.keys(schema.properties ?? {})).toEqual(expect.arrayContaining(['status', 'findings', 'discoveries', 'gc_signal']));
    expect(schema).not.toHaveProperty('$schema');
    // A custom base URL is a compatible server: it gets the classic name of the limit.
    expect(request.body.max_tokens).toBe(2048);
    expect(request.headers['x-stainless-retry-count']).toBe('0');
  });

  test('each brainstorm role gets its own prompt, and the challenger result carries its signal', async () => {
    const dir = session();
    const exec = executor();
    for (const role of ['ideator', 'challenger', 'synthesizer', 'evaluator']) {
      const outcome = await run(exec, task(dir, { id: `${role.toUpperCase()}-1`, role }));
      expect(outcome.kind, role).toBe('result');
    }
    const prompts = server.prompts();
    expect(prompts.map((prompt) => /^Role: (\S+)/m.exec(prompt)?.[1])).toEqual(['ideator', 'challenger', 'synthesizer', 'evaluator']);
    expect(prompts[1]).toContain('CRITICAL:n HIGH:n MEDIUM:n LOW:n');
    expect(prompts[1]).toContain('REVISION_NEEDED');
    expect(prompts[3]).toContain('Feasibility (weight 30%)');
  });

  test('the challenger answer keeps gc_signal and severity_summary', async () => {
    const outcome = await run(executor(), task(session(), { id: 'CHALLENGE-001', role: 'challenger' }));
    expect(outcome).toMatchObject({
      kind: 'result',
      result: { gc_signal: 'REVISION_NEEDED', severity_summary: 'CRITICAL:0 HIGH:1 MEDIUM:0 LOW:1' },
    });
  });

  test('analyze sessions use the analyze prompts; unknown roles fall back to the generic default', async () => {
    const analyze = session({ pipeline: 'analyze', topic: 'Why builds are slow' });
    const exec = executor();
    for (const role of ['explorer', 'analyst', 'discussant', 'synthesizer']) {
      expect((await run(exec, task(analyze, { id: 'A-1', role }))).kind, role).toBe('result');
    }
    const generic = session({ pipeline: 'generic' });
    expect((await run(exec, task(generic, { id: 'T-1', role: 'translator', title: 'Translate the README' }))).kind).toBe('result');
    const prompts = server.prompts();
    expect(prompts.slice(0, 4).every((prompt) => prompt.includes('Pipeline: analyze'))).toBe(true);
    expect(prompts[0]).toContain('Why builds are slow');
    expect(prompts[3]).toContain('executive summary');
    expect(prompts[4]).toMatch(/^Role: translator$/m);
    expect(prompts[4]).toContain('Pipeline: generic');
    expect(prompts[4]).toContain('Task: T-1 — Translate the README');
  });

  test('a session without session.json is a brainstorm session', async () => {
    await run(executor(), task(session(null), { role: 'challenger' }));
    expect(server.prompts()[0]).toContain('Pipeline: brainstorm');
    expect(server.prompts()[0]).toContain('(no topic given');
  });

  test('the prompt carries the row, prev_context, topic, upstream outputs and a digest of discoveries', async () => {
    const board = [
      { ts: 't', worker: 'IDEA-001', type: 'idea', data: { title: 'API Gateway', angle: 'Technical' } },
      { ts: 't', worker: 'CHALLENGE-001', type: 'critique', data: { idea_title: 'API Gateway', severity: 'HIGH' } },
      { ts: 't', worker: 'SYNTH-001', type: 'theme', data: { name: 'Resilient edge' } },
    ];
    const dir = session(undefined, {
      'discoveries.ndjson': `${board.map((line) => JSON.stringify(line)).join('\n')}\nnot json\n`,
      'artifacts/IDEA-001/ideas.md': '# Ideas\n\nThe gateway idea in full.',
    });
    const upstream: UpstreamContext = {
      deps: [{ id: 'IDEA-001', status: 'completed', findings: 'Generated 2 ideas', discovery: null, artifacts: ['artifacts/IDEA-001/ideas.md'] }],
      wisdom: { 'learnings.md': '- [IDEA-001] Keep ideas concrete\n' },
      warnings: [],
    };
    await run(
      executor(),
      task(dir, { id: 'IDEA-003', gc_round: '1', description: 'Address HIGH challenges; cost {{budget}}' }, { prev_context: '[Task CHALLENGE-001] 1 HIGH', upstream }),
    );
    const prompt = server.prompts()[0]!;
    expect(prompt).toContain('Task: IDEA-003 — Multi-angle idea generation');
    expect(prompt).toContain('Developer tooling for microservices');
    expect(prompt).toContain('Address HIGH challenges; cost {{budget}}');
    expect(prompt).toContain('Generator-critic round: 1');
    expect(prompt).toContain('[Task CHALLENGE-001] 1 HIGH');
    expect(prompt).toContain('- idea: API Gateway [IDEA-001]');
    expect(prompt).toContain('- critique: API Gateway (HIGH) [CHALLENGE-001]');
    expect(prompt).toContain('- theme: Resilient edge [SYNTH-001]');
    expect(prompt).toContain('### IDEA-001 (completed)');
    expect(prompt).toContain('The gateway idea in full.');
    expect(prompt).toContain('Keep ideas concrete');
  });

  test('the discoveries digest keeps the newest lines within its budget', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ ts: 't', worker: 'W', type: 'idea', data: { title: `Idea number ${i}` } }));
    await run(executor(), task(session(undefined, { 'discoveries.ndjson': `${lines.join('\n')}\n` })));
    const prompt = server.prompts()[0]!;
    expect(prompt).toContain('Idea number 199');
    expect(prompt).not.toContain('Idea number 169');
    expect(prompt).toContain('Idea number 170');
  });

  test('a promptsDir template overrides the built-in one for its role only', async () => {
    const prompts = mkdtempSync(join(tmpdir(), 'csv-wave-prompts-'));
    folders.push(prompts);
    mkdirSync(join(prompts, 'brainstorm'));
    writeFileSync(join(prompts, 'brainstorm', 'ideator.md'), 'Role: ideator\nTask: {id}\nCustom for {topic}; {unknown_name} stays; {{literal}}\n');
    const exec = executor({ promptsDir: prompts });
    await run(exec, task(session()));
    await run(exec, task(session(), { id: 'EVAL-001', role: 'evaluator' }));
    const [custom, builtIn] = server.prompts();
    expect(custom).toBe('Role: ideator\nTask: IDEA-001\nCustom for Developer tooling for microservices; {unknown_name} stays; {literal}\n');
    expect(builtIn).toContain('Feasibility (weight 30%)');
  });

  test('an answer in a markdown code fence is accepted', async () => {
    const outcome = await run(executor(), task(session(), { description: '[[fake:fenced]]' }));
    expect(outcome.kind).toBe('result');
  });

  test('a server that reports no usage gives an outcome without usage', async () => {
    const outcome = await run(executor(), task(session(), { description: '[[fake:no-usage]]' }));
    expect(outcome.kind).toBe('result');
    expect(outcome).not.toHaveProperty('usage');
  });

  test('the result id is the task id', async () => {
    const outcome = await run(executor(), task(session(), { id: 'IDEA-042' }));
    expect(outcome).toMatchObject({ kind: 'result', result: { id: 'IDEA-042' } });
  });
});

describe("OpenAiExecutor: the request's layout for a prompt cache", () => {
  test("two tasks of one role in one wave send the same bytes up to the task's own part: the schema, the limit, the system prompt and the role's instructions come first", async () => {
    const dir = session(undefined, { 'discoveries.ndjson': `${JSON.stringify({ ts: 't', worker: 'X-1', type: 'idea', data: { title: 'Shared idea' } })}\n` });
    const exec = executor({ maxTokens: 300 });
    const prompt = buildPromptContext(dir, { pipeline: 'brainstorm', topic: 'Developer tooling for microservices' }, kNoUpstream);
    const upstream = (id: string): UpstreamContext => ({ deps: [{ id, status: 'completed', findings: `Findings of ${id}`, discovery: null, artifacts: [] }], wisdom: {}, warnings: [] });
    const options = { signal: new AbortController().signal, timeoutMs: 30_000 };
    await exec.run(task(dir, { id: 'IDEA-001', title: 'First', description: 'First description' }, { prev_context: 'First context', upstream: upstream('D-1') }), { ...options, prompt: { ...prompt, upstream: '### D-1 (completed)\nFindings of D-1' } });
    await exec.run(task(dir, { id: 'IDEA-002', title: 'Second', description: 'Second description' }, { prev_context: 'Second context', upstream: upstream('D-2') }), { ...options, prompt: { ...prompt, upstream: '### D-2 (completed)\nFindings of D-2' } });
    const [a, b] = server.requests.map((request) => request.raw);
    const own = a!.indexOf('## Your task');
    expect(own).toBeGreaterThan(0);
    let same = 0;
    while (a![same] === b![same]) same++;
    expect(same).toBeGreaterThanOrEqual(own);
    // What the role's tasks share is before that point, in the order the body is sent.
    const before = a!.slice(0, own);
    expect(before).toContain('"response_format"');
    expect(before).toContain('"max_tokens":300');
    expect(before).toContain('You are one worker in a csv-wave pipeline');
    expect(before).toContain('Developer tooling for microservices');
    expect(before).toContain('Shared idea');
    for (const text of ['IDEA-001', 'First description', 'First context', 'Findings of D-1']) expect(a!.indexOf(text), text).toBeGreaterThan(own);
  });
});

describe('OpenAiExecutor: repair', () => {
  test('prose, then a valid answer to the repair request', async () => {
    const outcome = await run(executor(), task(session(), { description: '[[fake:invalid-then-valid]]' }));
    expect(outcome.kind).toBe('result');
    expect(outcome.usage).toEqual({ prompt_tokens: 240, completion_tokens: 60 });
    expect(server.requests).toHaveLength(2);
    const repair = server.requests[1]!.body.messages!;
    expect(repair.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(repair[2]!.content).toContain('Sure! Here are my ideas');
    expect(repair[3]!.content).toContain('not valid JSON');
  });

  test('a schema violation, then a valid answer; the repair request names the bad fields', async () => {
    const outcome = await run(executor(), task(session(), { description: '[[fake:schema-then-valid]]' }));
    expect(outcome.kind).toBe('result');
    const repair = server.requests[1]!.body.messages![3]!.content;
    expect(repair).toContain('status');
    expect(repair).toContain('findings');
    expect(repair).toContain('colour');
  });

  test('a challenger without gc_signal and severity_summary is asked again', async () => {
    const outcome = await run(executor(), task(session(), { id: 'CHALLENGE-001', role: 'challenger', description: '[[fake:no-signal-then-valid]]' }));
    expect(outcome).toMatchObject({ kind: 'result', result: { gc_signal: 'REVISION_NEEDED' } });
    expect(server.requests[1]!.body.messages![3]!.content).toContain('CRITICAL:n HIGH:n MEDIUM:n LOW:n');
  });

  test('challenger counts written loosely are accepted in the exact form, without a repair', async () => {
    const outcome = await run(executor(), task(session(), { id: 'CHALLENGE-001', role: 'challenger', description: '[[fake:loose-severity]]' }));
    expect(outcome).toMatchObject({
      kind: 'result',
      result: { gc_signal: 'REVISION_NEEDED', severity_summary: 'CRITICAL:0 HIGH:1 MEDIUM:0 LOW:1' },
    });
    expect(server.requests).toHaveLength(1);
  });

  test('still invalid after the repair: invalid-output, with the problem and the start of the answer', async () => {
    const outcome = await run(executor(), task(session(), { description: '[[fake:always-invalid]]' }));
    const error = expectError(outcome, 'invalid-output');
    expect(error.error).toContain('after one repair request');
    expect(error.error).toContain('not valid JSON');
    expect(error.error).toContain('I cannot produce JSON today');
    expect(error.usage).toEqual({ prompt_tokens: 240, completion_tokens: 60 });
    expect(server.requests).toHaveLength(2);
  });

  test('a refusal fails the task', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:refusal]]' })), 'task-failure');
    expect(error.error).toContain('I will not help with that.');
  });
});

describe('OpenAiExecutor: error classes', () => {
  test('429 with Retry-After in seconds: rate-limited', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:rate-limit]]' })), 'rate-limited');
    expect(error.retryAfterMs).toBe(1000);
    expect(error.error).toContain('Rate limit reached for requests');
    // The SDK does not retry on its own: the engine does.
    expect(server.requests).toHaveLength(1);
  });

  test('429 with retry-after-ms: that header wins', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:rate-limit-ms]]' })), 'rate-limited');
    expect(error.retryAfterMs).toBe(1500);
  });

  test('429 with Retry-After as an HTTP date', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:rate-limit-date]]' })), 'rate-limited');
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  test('429 for an exhausted quota is not worth retrying', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:quota]]' })), 'task-failure');
    expect(error.error).toContain('exceeded your current quota');
  });

  test('500: transient', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:server-error]]' })), 'transient');
    expect(error.error).toBe('The model server failed (HTTP 500): The server had an error while processing your request');
    expect(server.requests).toHaveLength(1);
  });

  test('503 with a plain-text body: transient, with the text', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:unavailable]]' })), 'transient');
    expect(error.error).toContain('upstream overloaded');
  });

  test('a dropped connection: transient', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:hang-up]]' })), 'transient');
    expect(error.error).toContain('Cannot reach the model server');
  });

  test('nothing listening: transient', async () => {
    const closed = await startFakeOpenAiServer();
    await closed.close();
    const error = expectError(await run(executor({ baseUrl: closed.baseUrl }), task(session())), 'transient');
    expect(error.error).toMatch(/ECONNREFUSED/);
  });

  test("400: task-failure with the server's message", async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:bad-request]]' })), 'task-failure');
    expect(error.error).toBe("The model server refused the request (HTTP 400): Invalid value for 'model': no such model");
  });

  test('an answer slower than the timeout: timeout', async () => {
    const error = expectError(await run(executor(), task(session(), { description: '[[fake:slow]]' }), { timeoutMs: 200 }), 'timeout');
    expect(error.error).toContain('Timed out after 0.2s');
  });

  test('an interrupted run stops the call: transient', async () => {
    const controller = new AbortController();
    const pending = run(executor(), task(session(), { description: '[[fake:slow]]' }), { signal: controller.signal, timeoutMs: 0 });
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    controller.abort();
    const error = expectError(await pending, 'transient');
    expect(error.error).toContain('interrupted');
  });

  // The engine reads session.json and the board on its main thread (a broken session.json
  // stops the run before any task: test/cli/validate.test.ts); the worker never reads them.
  test('an attempt without its prompt context fails without a request and reads no session file', async () => {
    const dir = session(null, { 'session.json': '{ not json' });
    const outcome = await executor().run(task(dir), { signal: new AbortController().signal, timeoutMs: 30_000 });
    expect(expectError(outcome, 'task-failure').error).toContain('prompt context');
    expect(server.requests).toHaveLength(0);
  });
});

describe('OpenAiExecutor: the API key', () => {
  test('goes in the Authorization header and nowhere in any outcome', async () => {
    const exec = executor();
    const outcomes: OpenAiOutcome[] = [];
    for (const behaviour of ['ok', 'unauthorized', 'rate-limit', 'server-error', 'always-invalid', 'bad-request']) {
      outcomes.push(await run(exec, task(session(), { description: `[[fake:${behaviour}]]` })));
    }
    outcomes.push(await run(exec, task(session(), { description: '[[fake:slow]]' }), { timeoutMs: 100 }));
    for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${kKey}`);
    const unauthorized = expectError(outcomes[1]!, 'task-failure');
    expect(unauthorized.error).toBe('The model server refused the request (HTTP 401): Incorrect API key provided: ***.');
    expect(JSON.stringify(outcomes)).not.toContain(kKey);
  });

  test('defaults to OPENAI_API_KEY', async () => {
    vi.stubEnv('OPENAI_API_KEY', kKey);
    const outcome = await run(new OpenAiExecutor({ model: 'fake-model', baseUrl: server.baseUrl }), task(session(), { description: '[[fake:unauthorized]]' }));
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${kKey}`);
    expect(JSON.stringify(outcome)).not.toContain(kKey);
  });

  test('without any key a local server gets a placeholder', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    const outcome = await run(new OpenAiExecutor({ model: 'fake-model', baseUrl: server.baseUrl }), task(session()));
    expect(outcome.kind).toBe('result');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer not-needed');
  });
});

describe('OpenAiExecutor options', () => {
  test('model must be a non-empty string', () => {
    expect(() => new OpenAiExecutor({ model: '' })).toThrow('Expected `model` to be a non-empty string, got `` (string)');
  });

  test('maxTokens must be a positive integer', () => {
    expect(() => new OpenAiExecutor({ model: 'm', apiKey: 'x', maxTokens: 0 })).toThrow('Expected `maxTokens` to be a positive integer, got `0` (number)');
  });
});

describe('renderPrompt', () => {
  test('fills known names, keeps unknown ones, turns doubled braces into single ones', () => {
    expect(renderPrompt('{a} {b} {{a}} }} {not a name} {}', { a: 'x' })).toBe('x {b} {a} } {not a name} {}');
  });

  test('does not expand placeholders inside values', () => {
    expect(renderPrompt('{a}{b}', { a: '{b}', b: '$1 `rm` \'"' })).toBe('{b}$1 `rm` \'"');
  });
});

describe('parseRetryAfter', () => {
  test('seconds, milliseconds, HTTP dates, nonsense', () => {
    const now = Date.parse('2026-03-08T10:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 08 Mar 2026 10:00:30 GMT' }), now)).toBe(30_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sun, 08 Mar 2026 09:00:00 GMT' }), now)).toBe(0);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
