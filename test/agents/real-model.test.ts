import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { answerSchema } from '../../src/executors/openai/contract-schema.js';
import { claudeBinary, claudeEnv, codexBinary, codexHome, kClaudeTestKey, removeTempDirs, runCli, tempDir } from '../helpers/agent-servers/agent-cli.js';
import { proxyTrapEnv, startProxyTrap, type ProxyTrap } from '../helpers/agent-servers/common.js';
import { startMessagesServer, type MessagesServer } from '../helpers/agent-servers/messages-server.js';
import { modelReplies, type ModelReplies, type ModelRepliesOptions, type ModelTurn } from '../helpers/agent-servers/model-replies.js';
import { startResponsesServer, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import { loadTestModel } from '../helpers/model-server/index.js';
import { readRows } from '../helpers/session-builder.js';
import { spawnCliWith } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';

/**
 * The real agent CLIs on a real model: codex and claude talk to the scripted loopback servers
 * in their model mode (model-replies.ts), where the tiny model of ../shared/models writes each
 * answer under a grammar made from the schema the CLI sent. The model is loaded once for the
 * file; under CI a model that cannot load fails the file (loadTestModel throws), never skips it.
 * Only the answers' shape is checked, never what they say.
 */

const model = await loadTestModel();

const kKey = 'sk-real-model-test-0123456789abcdef';

/**
 * The safety net of a brainstorm run (not a measure): alone it takes 4 to 10 s, but it starts
 * codex once per model task and csv-wave thrice, and beside four busy loops on two cores the
 * whole pipeline took 60 s, half of vitest's default net.
 */
const kBrainstormTimeoutMs = 300_000;

let replies: ModelReplies | undefined;
let trap: ProxyTrap;
let responses: ResponsesServer | undefined;
let messages: MessagesServer | undefined;

beforeEach(async () => {
  trap = await startProxyTrap();
});
afterEach(async () => {
  await responses?.close();
  await messages?.close();
  responses = undefined;
  messages = undefined;
  await trap?.close();
  await replies?.close();
  replies = undefined;
  removeTempDirs();
});

type Json = Record<string, unknown>;

/**
 * The value has the shape the schema asks (the subset csv-wave's contracts use: type, enum,
 * required properties, items); a required property is checked inside, an optional one as given.
 */
function expectShape(value: unknown, schema: Json, where = 'answer'): void {
  if (Array.isArray(schema['enum'])) {
    expect(schema['enum'], where).toContain(value);
    return;
  }
  switch (schema['type']) {
    case 'object': {
      expect(value !== null && typeof value === 'object' && !Array.isArray(value), `${where} is an object`).toBe(true);
      const object = value as Json;
      const properties = (schema['properties'] ?? {}) as Record<string, Json>;
      for (const key of (schema['required'] ?? []) as string[]) expect(Object.keys(object), `${where} has ${key}`).toContain(key);
      for (const [key, inner] of Object.entries(object)) if (properties[key] !== undefined) expectShape(inner, properties[key], `${where}.${key}`);
      if (schema['additionalProperties'] === false) expect(Object.keys(object).filter((key) => properties[key] === undefined), `${where}: keys of no property`).toEqual([]);
      return;
    }
    case 'array':
      expect(Array.isArray(value), `${where} is an array`).toBe(true);
      for (const [index, item] of (value as unknown[]).entries()) if (schema['items'] !== undefined) expectShape(item, schema['items'] as Json, `${where}[${index}]`);
      return;
    case 'string':
      expect(typeof value, where).toBe('string');
      if (typeof schema['minLength'] === 'number') expect((value as string).length, `${where}'s length`).toBeGreaterThanOrEqual(schema['minLength']);
      return;
    case 'number':
      expect(typeof value, where).toBe('number');
      return;
    case 'integer':
      expect(Number.isInteger(value), `${where} is an integer`).toBe(true);
      return;
    case 'boolean':
      expect(typeof value, where).toBe('boolean');
      return;
  }
}

/** Every file under the folder, as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

function ndjson(path: string): Json[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Json);
}

/** The model's turns for each task, in order, as usage.ndjson should hold them. */
function turnsByTask(turns: readonly ModelTurn[]): Record<string, Array<{ prompt: number; completion: number; cached: number }>> {
  const out: Record<string, Array<{ prompt: number; completion: number; cached: number }>> = {};
  for (const turn of turns) (out[turn.task ?? '(none)'] ??= []).push({ prompt: turn.prompt_tokens, completion: turn.completion_tokens, cached: turn.cached_tokens });
  return out;
}

/**
 * What the engine made of a run of real model answers: every task ended by the rules (a
 * failure has its real cause in attempts.ndjson and the row), and usage.ndjson holds, task by
 * task and line by line, the tokens the server reported for it: the model's own counts.
 */
function expectEndedByTheRules(dir: string, turns: readonly ModelTurn[], exitCode: number | null, usage: 'per-request' | 'per-task'): void {
  const rows = readRows(dir);
  const attempts = ndjson(join(dir, 'attempts.ndjson'));
  expect(turns.filter((turn) => turn.task === undefined || !rows.has(turn.task)), 'answers for no task of the session').toEqual([]);
  let failures = 0;
  for (const [id, row] of rows) {
    expect(['completed', 'failed', 'skipped'], `${id} ended ${row.status}: ${row.error}`).toContain(row.status);
    if (row.status === 'skipped') {
      expect(row.error, id).toMatch(/^(Dependency failed or skipped: \S+ \((failed|skipped)\)|Skipped: GC converged)/);
      if (row.error.startsWith('Dependency failed')) failures++;
    }
    if (row.status === 'completed') expect(row.findings.trim(), `${id}'s findings`).not.toBe('');
    if (row.status === 'failed') {
      failures++;
      const errorClass = String(attempts.filter((line) => line['task'] === id).at(-1)?.['error_class'] ?? '');
      // The model's answer broke the contract csv-wave holds it to, or it said it failed: never a fault of the run.
      expect(['invalid-output', 'task-failure'], `${id} failed as ${errorClass}: ${row.error}`).toContain(errorClass);
      expect(row.error.trim(), `${id}'s error`).not.toBe('');
    }
  }
  expect(exitCode, 'exit code').toBe(failures > 0 ? 1 : 0);

  const written: Record<string, Array<{ prompt: number; completion: number; cached: number }>> = {};
  for (const line of usageLinesOf(dir)) {
    expect(line, `${line.task}'s usage line`).toMatchObject({ kind: 'agent', reported: true });
    (written[line.task] ??= []).push({ prompt: line.prompt_tokens, completion: line.completion_tokens, cached: line.cached_tokens });
  }
  const served = turnsByTask(turns);
  if (usage === 'per-request') {
    expect(written).toEqual(served);
    return;
  }
  // One line per CLI run, which sums the requests of that run.
  const sums = (lines: Record<string, Array<{ prompt: number; completion: number; cached: number }>>) =>
    Object.fromEntries(Object.entries(lines).map(([task, list]) => [task, list.reduce((sum, line) => ({ prompt: sum.prompt + line.prompt, completion: sum.completion + line.completion, cached: sum.cached + line.cached }), { prompt: 0, completion: 0, cached: 0 })]));
  expect(sums(written)).toEqual(sums(served));
}

/** The codex run's environment: the real codex first on PATH, a private CODEX_HOME and HOME naming no provider, the proxy trap, a key. */
function codexEnv(): Record<string, string | undefined> {
  const home = codexHome();
  return {
    ...proxyTrapEnv(trap),
    PATH: `${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
    HOME: home,
    CODEX_HOME: home,
    OPENAI_API_KEY: kKey,
    OPENAI_BASE_URL: undefined,
  };
}

/** The claude run's environment: the real claude first on PATH, a private HOME and config folder, a key, no nonessential traffic, the proxy trap. */
function claudeRunEnv(origin: string): Record<string, string | undefined> {
  return { ...claudeEnv(origin, proxyTrapEnv(trap)), PATH: `${dirname(claudeBinary())}:${process.env.PATH ?? ''}` };
}

type Agent = 'codex' | 'claude';

/**
 * `csv-wave init --template brainstorm --executor <agent>` and `csv-wave run` (the built CLI)
 * against the agent's server in model mode; checks what every such run must hold: one model
 * answer per request the CLI sent, each under the grammar of its task's contract and a whole
 * JSON object of that shape, every task ended by the rules, usage.ndjson as the server
 * reported it, the status totals, report.html, no key in the session, nothing off loopback.
 */
async function agentBrainstorm(agent: Agent, options: ModelRepliesOptions): Promise<{ dir: string; turns: ModelTurn[] }> {
  const started = performance.now();
  replies = await modelReplies(model!, options);
  let baseUrl: string;
  let env: Record<string, string | undefined>;
  let schemas: () => unknown[];
  if (agent === 'codex') {
    const server = (responses = await startResponsesServer(replies.responses));
    baseUrl = server.baseUrl;
    env = codexEnv();
    schemas = () => server.responseBodies().map((body) => body.text?.format?.schema);
  } else {
    const server = (messages = await startMessagesServer(replies.messages));
    baseUrl = server.origin;
    env = claudeRunEnv(server.origin);
    schemas = () => server.messageBodies().map((body) => body.tools?.find((tool) => tool.name === 'StructuredOutput')?.input_schema);
  }
  const dir = join(tempDir(`real-model-${agent}`), 'session');
  const init = await spawnCliWith({ env }, 'init', dir, '--template', 'brainstorm', '--topic', 'Quieter open-plan offices', '--executor', agent, '--model', 'stories260K', '--base-url', baseUrl).exited;
  expect(init.code, init.stderr).toBe(0);
  const run = await spawnCliWith({ env }, 'run', dir, '--price-input', '1', '--price-output', '2').exited;
  expect([0, 1], run.stderr).toContain(run.code);

  const rows = readRows(dir);
  const sent = schemas();
  const turns = replies.turns;
  expect(turns).toHaveLength(sent.length);
  for (const [index, turn] of turns.entries()) {
    const role = rows.get(turn.task ?? '')?.role ?? '';
    const contract = answerSchema('brainstorm', role) as unknown as Json;
    expect(turn, `answer ${index}`).toMatchObject({ api: agent === 'codex' ? 'responses' : 'messages', schema: true });
    if (agent === 'codex') expect(sent[index], `the schema of answer ${index}`).toEqual(contract);
    else expect(sent[index], `the schema of answer ${index}`).toMatchObject(contract);
    // An answer cut off at its token limit is no JSON (csv-wave fails it as invalid-output); a whole one has the contract's shape.
    if (turn.stopReason !== 'maxTokens') expectShape(JSON.parse(turn.text), contract, `${turn.task}'s answer`);
  }
  expectEndedByTheRules(dir, turns, run.code, agent === 'codex' ? 'per-request' : 'per-task');
  for (const line of usageLinesOf(dir)) {
    expect(line.model).toBe('stories260K');
    expect(line.agent_session).toMatch(/^[0-9a-f-]{36}$/);
    expect(line.cost_usd).toBeGreaterThan(0);
  }
  const status = JSON.parse((await spawnCliWith({ env }, 'status', dir, '--json').exited).stdout) as { tokens?: unknown };
  const total = turns.reduce((sum, turn) => ({ prompt: sum.prompt + turn.prompt_tokens, completion: sum.completion + turn.completion_tokens }), { prompt: 0, completion: 0 });
  expect(status.tokens).toEqual(total);
  const report = readFileSync(join(dir, 'report.html'), 'utf8');
  for (const id of rows.keys()) expect(report, `report.html names ${id}`).toContain(id);
  const text = allText(dir);
  expect(text).not.toContain(kKey);
  expect(text).not.toContain(kClaudeTestKey);
  expect(trap.connections).toEqual([]);
  const tokens = turns.reduce((sum, turn) => sum + turn.prompt_tokens + turn.completion_tokens, 0);
  console.info(`${agent} brainstorm: ${turns.length} model answers, ${tokens} tokens, ${turns.reduce((sum, turn) => sum + turn.generationMs, 0).toFixed(0)} ms in the model, ${(performance.now() - started).toFixed(0)} ms in all; rows ${[...rows.values()].map((row) => `${row.id} ${row.status}`).join(', ')}`);
  return { dir, turns };
}

/**
 * The brainstorm's rules on top of the request's schema: a completed status, the challenger's
 * counts and the signal they mean (HIGH:1, so the GC loop asks for a revision round), the
 * evaluator's scores and rank in their ranges with at least one evaluation. Everything else
 * (findings, titles, which score) is the model's.
 */
function brainstormRules(schema: Json): Json {
  const properties = schema['properties'] as Record<string, Json>;
  properties['status'] = { enum: ['completed'] };
  if (properties['severity_summary'] !== undefined) properties['severity_summary'] = { enum: ['CRITICAL:0 HIGH:1 MEDIUM:1 LOW:0'] };
  if (properties['gc_signal'] !== undefined) properties['gc_signal'] = { enum: ['REVISION_NEEDED'] };
  const discoveries = properties['discoveries'];
  const data = (discoveries?.['items'] as Json | undefined)?.['properties'] as Record<string, Json> | undefined;
  const evaluation = data?.['data']?.['properties'] as Record<string, Json> | undefined;
  if (discoveries !== undefined && evaluation !== undefined) {
    discoveries['minItems'] = 1;
    const score = { enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] };
    for (const name of Object.keys((evaluation['scores']?.['properties'] ?? {}) as Json)) (evaluation['scores']!['properties'] as Json)[name] = score;
    evaluation['weighted_score'] = score;
    evaluation['rank'] = { enum: [1, 2, 3] };
  }
  return schema;
}

/** claude's usage is the sum over the requests of its run, as the server reported them (input_tokens leaves out the cached ones). */
function expectClaudeUsage(result: Json, turns: readonly ModelTurn[]): void {
  const sum = (pick: (turn: ModelTurn) => number) => turns.reduce((total, turn) => total + pick(turn), 0);
  expect(result['usage']).toMatchObject({
    input_tokens: sum((turn) => turn.prompt_tokens - turn.cached_tokens),
    output_tokens: sum((turn) => turn.completion_tokens),
    cache_read_input_tokens: sum((turn) => turn.cached_tokens),
    cache_creation_input_tokens: 0,
  });
}

describe.skipIf(model === undefined)('the real agent CLIs on the real model', () => {
  test('a brainstorm session runs through the real codex as the model answers: every task ends by the rules, usage.ndjson holds the model’s token counts', async () => {
    const { turns } = await agentBrainstorm('codex', {});
    expect(turns.length).toBeGreaterThanOrEqual(2);
  }, kBrainstormTimeoutMs);

  test('a brainstorm session runs end to end through the real codex, the model held to the brainstorm’s rules: every task completes, the GC loop revises once, discoveries and report.html are filled in', async () => {
    const { dir, turns } = await agentBrainstorm('codex', { narrow: brainstormRules });
    // With numbers held to their ranges the bounds keep every answer short of its token limit.
    for (const turn of turns) expect(turn.stopReason, `${turn.task}: ${turn.text}`).not.toBe('maxTokens');
    const rows = readRows(dir);
    // The third round's ideas are skipped once the GC check converges at its round limit; every other task completes.
    expect([...rows.values()].filter((row) => row.status !== 'completed').map((row) => `${row.id} ${row.status}: ${row.error}`)).toEqual(['IDEA-004 skipped: Skipped: GC converged (GC-CHECK-002)']);
    expect([...new Set(turns.map((turn) => turn.task))].sort()).toEqual(['CHALLENGE-001', 'CHALLENGE-002', 'EVAL-001', 'IDEA-001', 'IDEA-002', 'IDEA-003', 'SYNTH-001']);
    expect(rows.get('GC-CHECK-001')!.findings).toMatch(/^GC decision: REVISION_NEEDED/);
    expect(rows.get('GC-CHECK-002')!.findings).toMatch(/^GC decision: CONVERGED \(round limit 2 reached/);
    const types = ndjson(join(dir, 'discoveries.ndjson')).map((line) => line['type']);
    expect(types).toContain('evaluation');
    expect(types).toContain('gc_decision');
  }, kBrainstormTimeoutMs);

  test('a brainstorm session runs end to end through the real claude, the model held to the brainstorm’s rules: every task completes, the GC loop revises once, usage.ndjson holds the model’s token counts', async () => {
    const { dir, turns } = await agentBrainstorm('claude', { narrow: brainstormRules });
    const rows = readRows(dir);
    expect([...rows.values()].filter((row) => row.status !== 'completed').map((row) => `${row.id} ${row.status}: ${row.error}`)).toEqual(['IDEA-004 skipped: Skipped: GC converged (GC-CHECK-002)']);
    expect([...new Set(turns.map((turn) => turn.task))].sort()).toEqual(['CHALLENGE-001', 'CHALLENGE-002', 'EVAL-001', 'IDEA-001', 'IDEA-002', 'IDEA-003', 'SYNTH-001']);
    const types = ndjson(join(dir, 'discoveries.ndjson')).map((line) => line['type']);
    expect(types).toContain('evaluation');
    expect(types).toContain('gc_decision');
  }, kBrainstormTimeoutMs);

  test('claude -p --json-schema answers with structured_output the model wrote under the schema, and the usage the server reported', async () => {
    replies = await modelReplies(model!);
    messages = await startMessagesServer(replies.messages);
    const schema = answerSchema('brainstorm', 'ideator') as unknown as Json;
    const dir = tempDir('real-model-claude');
    const run = await runCli(
      claudeBinary(),
      ['-p', '--output-format', 'json', '--json-schema', JSON.stringify(schema), '--model', 'stories260K', '--tools', '', '--max-turns', '3', '--no-session-persistence'],
      { env: claudeEnv(messages.origin, proxyTrapEnv(trap)), cwd: dir, input: 'Task: IDEA-001\nGive ideas for quieter open-plan offices, as JSON.' },
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const result = JSON.parse(run.stdout) as Json;
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false });
    expectShape(result['structured_output'], schema, 'structured_output');

    const turns = replies.turns;
    expect(turns.length).toBeGreaterThanOrEqual(1);
    expect(turns).toHaveLength(messages.messageBodies().length);
    // The last answer is the one claude took: the StructuredOutput call the model wrote.
    expect(turns.at(-1)).toMatchObject({ api: 'messages', schema: true, task: 'IDEA-001' });
    expect(result['structured_output']).toEqual(JSON.parse(turns.at(-1)!.text));
    const tool = messages.messageBodies()[0]!.tools?.find((candidate) => candidate.name === 'StructuredOutput');
    expect(tool?.input_schema).toMatchObject(schema);
    expectClaudeUsage(result, turns);
    expect(trap.connections).toEqual([]);
  });
  test('claude -p gives the model another turn when its StructuredOutput call breaks the schema (a pattern no grammar holds): the error tool result is what it reads next, and --max-turns ends the run', async () => {
    replies = await modelReplies(model!);
    messages = await startMessagesServer(replies.messages);
    const schema = answerSchema('brainstorm', 'challenger') as unknown as Json;
    const run = await runCli(
      claudeBinary(),
      ['-p', '--output-format', 'json', '--json-schema', JSON.stringify(schema), '--model', 'stories260K', '--tools', '', '--max-turns', '2', '--no-session-persistence'],
      { env: claudeEnv(messages.origin, proxyTrapEnv(trap)), cwd: tempDir('real-model-claude'), input: 'Task: CHALLENGE-001\nChallenge the ideas, as JSON.' },
    );
    const result = JSON.parse(run.stdout) as Json;
    const bodies = messages.messageBodies();
    expect(run.code).toBe(1);
    expect(result).toMatchObject({ subtype: 'error_max_turns', is_error: true });
    expect(bodies).toHaveLength(2);
    expect(replies.turns).toHaveLength(2);
    // The second answer was written after reading claude's error tool result, not the first prompt again.
    const last = bodies[1]!.messages!.at(-1)!;
    expect(JSON.stringify(last.content)).toContain('"is_error":true');
    expect(replies.turns.map((turn) => turn.schema)).toEqual([true, true]);
    expectClaudeUsage(result, replies.turns);
    expect(trap.connections).toEqual([]);
  });
});
