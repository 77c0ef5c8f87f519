import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { answerFormat, readContractAnswer } from '../../src/executors/openai/contract.js';
import { answerSchema } from '../../src/executors/openai/contract-schema.js';
import { kSystemPrompt, systemPrompt } from '../../src/executors/openai/prompt.js';
import { OpenAiExecutor, type OpenAiOutcome } from '../../src/executors/openai/index.js';
import type { TaskInput } from '../../src/executors/types.js';
import { buildPromptContext } from '../../src/knowledge/prompt-context.js';
import { pipelineFor } from '../../src/pipelines/pipeline-for.js';
import { kPipelines } from '../../src/schema/session.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession } from '../helpers/session-builder.js';

// The model-answer contract (issue 15): the schema sent requires what a task's result needs,
// per role, within what grammar-constrained servers take; what a server does not enforce
// is checked on the answer, which gets one repair request, then fails as invalid-output.

let server: FakeOpenAiServer;
const folders: string[] = [];

beforeAll(async () => {
  server = await startFakeOpenAiServer();
});
afterAll(async () => {
  await server.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
});

function session(pipeline: string): string {
  const dir = buildSession(null, { session: { pipeline, topic: 'Quieter offices' }, prefix: 'csv-wave-contract-' });
  folders.push(dir);
  return dir;
}

function task(dir: string, id: string, role: string, description = 'Do it.'): TaskInput {
  const row = { id, title: id, description, role, angle: '', gc_round: '0', deps: '', context_from: '', exec_mode: 'csv-wave' };
  return { id, wave: 1, attempt: 1, session: dir, row, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } };
}

function run(pipeline: string, id: string, role: string, behaviour: string): Promise<OpenAiOutcome> {
  const dir = session(pipeline);
  const input = task(dir, id, role, `[[fake:${behaviour}]]`);
  const prompt = buildPromptContext(dir, { pipeline, topic: 'Quieter offices' }, input.upstream);
  const executor = new OpenAiExecutor({ model: 'm', baseUrl: server.baseUrl, apiKey: 'sk-contract-test-key' });
  return executor.run(input, { signal: new AbortController().signal, timeoutMs: 30_000, prompt });
}

function invalid(outcome: OpenAiOutcome): string {
  expect(outcome.kind).toBe('error');
  if (outcome.kind !== 'error') throw new Error('unreachable');
  expect(outcome.errorClass).toBe('invalid-output');
  expect(server.requests).toHaveLength(2);
  return outcome.error;
}

/** The repair request's last message: what the model is told was wrong. */
function repairText(): string {
  const messages = server.requests[1]!.body.messages!;
  return messages.at(-1)!.content;
}

/** The keywords of GrammarSchema (src/schema/grammar-schema.ts): what llama.cpp's json-schema-to-grammar takes. */
const kGrammarKeywords = new Set(['type', 'properties', 'required', 'enum', 'pattern', 'minLength', 'items', 'additionalProperties']);

/** Every object schema within a schema (itself included). */
function objects(schema: Record<string, unknown>, found: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (schema.type === 'object') found.push(schema);
  for (const inner of Object.values((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) objects(inner, found);
  if (schema.items) objects(schema.items as Record<string, unknown>, found);
  return found;
}

/** Every keyword used anywhere in a schema. */
function keywords(schema: unknown, found = new Set<string>()): Set<string> {
  if (schema === null || typeof schema !== 'object') return found;
  for (const [key, value] of Object.entries(schema)) {
    found.add(key);
    if (key === 'properties') for (const inner of Object.values(value as object)) keywords(inner, found);
    else if (key === 'items') keywords(value, found);
  }
  return found;
}

describe('the schema sent', () => {
  const roles = [
    ['brainstorm', 'ideator'], ['brainstorm', 'challenger'], ['brainstorm', 'synthesizer'], ['brainstorm', 'evaluator'],
    ['analyze', 'explorer'], ['analyze', 'analyst'], ['generic', 'writer'], ['generic', 'supervisor'], ['custom', 'x'],
  ] as const;

  test.each(roles)('%s %s: requires status and non-empty findings, uses only keywords servers turn into a grammar', (pipeline, role) => {
    const schema = answerFormat(pipeline, role).json_schema.schema as { required: string[]; properties: Record<string, { minLength?: number }> };
    expect(schema.required).toEqual(expect.arrayContaining(['status', 'findings']));
    expect(schema.properties.findings!.minLength).toBe(1);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    for (const keyword of keywords(schema)) expect(kGrammarKeywords.has(keyword), keyword).toBe(true);
    expect(JSON.stringify(schema)).not.toMatch(/minimum|maximum|propertyNames|anyOf|\$schema/);
    // Converters differ on what an object without additionalProperties allows: every one says.
    for (const object of objects(schema as unknown as Record<string, unknown>)) expect(typeof object.additionalProperties).toBe('boolean');
  });

  test('the challenger must give its counts in the exact form and a signal from its enum', () => {
    const schema = answerSchema('brainstorm', 'challenger');
    expect(schema.required).toEqual(expect.arrayContaining(['severity_summary', 'gc_signal']));
    expect(schema.properties!.gc_signal!.enum).toEqual(['REVISION_NEEDED', 'CONVERGED']);
    const pattern = new RegExp(schema.properties!.severity_summary!.pattern!);
    expect(pattern.test('CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1')).toBe(true);
    for (const loose of ['CRITICAL:0 HIGH:2 MEDIUM:3', 'high=2', 'CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1 extra', '']) expect(pattern.test(loose), loose).toBe(false);
    // Only the brainstorm challenger: a generic session's challenger is not asked for them.
    expect(answerSchema('generic', 'challenger').required).toEqual(['status', 'findings']);
  });

  test('the evaluator must give its evaluations with scores', () => {
    const schema = answerSchema('brainstorm', 'evaluator');
    expect(schema.required).toContain('discoveries');
    const data = schema.properties!.discoveries!.items!.properties!.data!;
    expect(data.required).toEqual(expect.arrayContaining(['proposal_title', 'scores', 'weighted_score', 'rank', 'recommendation']));
    expect(data.properties!.scores!.required).toEqual(['feasibility', 'innovation', 'impact', 'cost']);
  });

  test('route and artifact contracts are in the schema and the system prompt of the lifecycle only', () => {
    for (const name of ['brainstorm', 'analyze', 'generic'] as const) {
      expect(Object.keys(answerSchema(name, 'writer').properties!), name).not.toContain('artifact_manifests');
      expect(systemPrompt(name), name).toBe(kSystemPrompt);
    }
    expect(kSystemPrompt).not.toContain('artifact_manifests');
    expect(Object.keys(answerSchema('lifecycle', 'writer').properties!)).toEqual(expect.arrayContaining(['route', 'artifact_manifests', 'artifact_validations']));
    expect(systemPrompt('lifecycle')).toContain('"artifact_manifests"');
    expect(systemPrompt('lifecycle').endsWith('No other fields.')).toBe(true);
  });

  test('supervision fields are in the schema of a checkpoint only, and required there', () => {
    expect(pipelineFor('generic').checkpointRoles.has('supervisor')).toBe(true);
    for (const name of kPipelines) {
      for (const role of pipelineFor(name).roles ?? ['writer']) {
        expect(Object.keys(answerSchema(name, role).properties!), `${name} ${role}`).not.toContain('supervision_verdict');
      }
    }
    const checkpoint = answerSchema('generic', 'supervisor');
    expect(checkpoint.required).toContain('supervision_verdict');
    expect(checkpoint.properties!.supervision_verdict!.enum).toEqual(['pass', 'warn', 'block']);
  });

  test('the request carries the schema of its task’s role', async () => {
    await run('brainstorm', 'CHALLENGE-001', 'challenger', 'ok');
    const sent = server.requests[0]!.body.response_format!.json_schema!.schema as { required: string[] };
    expect(sent).toEqual(JSON.parse(JSON.stringify(answerSchema('brainstorm', 'challenger'))));
  });
});

describe('answers that are not a result get one repair, then invalid-output', () => {
  test('{}', async () => {
    const error = invalid(await run('brainstorm', 'IDEA-001', 'ideator', 'empty-object'));
    expect(error).toContain('"status" is missing');
    expect(error).toContain('"findings" is missing or empty');
    expect(repairText()).toContain('"findings" is missing or empty');
  });

  test('only an error', async () => {
    const error = invalid(await run('analyze', 'EXPLORE-001', 'explorer', 'only-error'));
    expect(error).toContain('"findings" is missing or empty (an "error" alone is not a result)');
  });

  test('failed without findings', async () => {
    const error = invalid(await run('generic', 'T-1', 'writer', 'failed-no-findings'));
    expect(error).toContain('"findings" is missing or empty');
    expect(error).not.toContain('"status" is missing');
  });

  test('a challenger without severity_summary and gc_signal', async () => {
    const error = invalid(await run('brainstorm', 'CHALLENGE-001', 'challenger', 'no-signal'));
    expect(error).toContain('severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n"');
  });

  test('an evaluation score out of its range', async () => {
    const error = invalid(await run('brainstorm', 'EVAL-001', 'evaluator', 'score-out-of-range'));
    expect(error).toContain('discoveries.0.data.scores.feasibility must be a number from 0 to 10, got 14');
  });

  test('a repair that succeeds: {} first, the result on the repair request', async () => {
    const outcome = await run('brainstorm', 'IDEA-001', 'ideator', 'empty-then-valid');
    expect(outcome).toMatchObject({ kind: 'result', result: { id: 'IDEA-001', status: 'completed' } });
    expect(server.requests).toHaveLength(2);
    expect(repairText()).toContain('"findings" is missing or empty');
    // Both requests' tokens are counted.
    expect(outcome.usage).toEqual({ prompt_tokens: 240, completion_tokens: 60 });
  });
});

describe('supervision fields of a model answer', () => {
  test('dropped from a task that is no checkpoint, with a note naming the fields', async () => {
    const outcome = await run('brainstorm', 'IDEA-001', 'ideator', 'block');
    expect(outcome.kind).toBe('result');
    if (outcome.kind !== 'result') return;
    expect(outcome.result).not.toHaveProperty('supervision_verdict');
    expect(outcome.result).not.toHaveProperty('supervision_score');
    expect(outcome.notes).toEqual([
      'the model\'s supervision_verdict "block" and supervision_score 0.1 dropped: role ideator is not a checkpoint of the brainstorm pipeline, so its verdict does not count',
    ]);
    expect(server.requests).toHaveLength(1);
  });

  test('kept from a checkpoint', async () => {
    const outcome = await run('generic', 'CHECK-1', 'supervisor', 'block');
    expect(outcome).toMatchObject({ kind: 'result', result: { supervision_verdict: 'block', supervision_score: 0.1 } });
    expect(outcome).not.toHaveProperty('notes');
  });
});

describe('readContractAnswer', () => {
  const read = (answer: unknown, pipeline = 'generic', role = 'writer') => readContractAnswer(JSON.stringify(answer), 'stop', pipeline, role);

  test('a complete answer passes, with no notes', () => {
    expect(read({ status: 'completed', findings: 'Done' })).toEqual({ ok: true, result: { status: 'completed', findings: 'Done' }, notes: [] });
  });

  test('blank findings are no findings', () => {
    expect(read({ status: 'completed', findings: ' \n ' })).toMatchObject({ ok: false, problem: expect.stringContaining('"findings" is missing or empty') });
  });

  test('a checkpoint must give its verdict, and its score stays within 0 to 1', () => {
    expect(read({ status: 'completed', findings: 'ok' }, 'generic', 'supervisor')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('"supervision_verdict" is missing'),
    });
    expect(read({ status: 'completed', findings: 'ok', supervision_verdict: 'pass', supervision_score: 3 }, 'generic', 'supervisor')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('supervision_score'),
    });
  });

  test('a verdict that is not even valid is dropped, not repaired, from a task that is no checkpoint', () => {
    const answer = read({ status: 'completed', findings: 'ok', supervision_verdict: 'nonsense', supervision_score: null });
    expect(answer).toMatchObject({ ok: true, result: { findings: 'ok' } });
    if (answer.ok) expect(answer.notes).toEqual([expect.stringContaining('supervision_verdict "nonsense"')]);
  });

  test('evaluation ranks and recommendations are checked too', () => {
    const evaluation = (data: Record<string, unknown>) => ({
      status: 'completed',
      findings: 'Ranked',
      discoveries: [{ type: 'evaluation', data: { proposal_title: 'P', scores: { feasibility: 1, innovation: 2, impact: 3, cost: 4 }, weighted_score: 2.4, rank: 1, recommendation: 'Park', ...data } }],
    });
    expect(read(evaluation({}), 'brainstorm', 'evaluator').ok).toBe(true);
    const problem = (data: Record<string, unknown>) => {
      const answer = read(evaluation(data), 'brainstorm', 'evaluator');
      return answer.ok ? '' : answer.problem;
    };
    expect(problem({ rank: 0 })).toContain('rank must be a whole number from 1');
    expect(problem({ weighted_score: -1 })).toContain('weighted_score must be a number from 0 to 10, got -1');
    expect(problem({ recommendation: 'maybe' })).toContain('recommendation must be one of');
    expect(problem({ scores: { feasibility: 1 } })).toContain('scores.innovation must be a number from 0 to 10, got null');
    expect(read({ status: 'completed', findings: 'Ranked', discoveries: [] }, 'brainstorm', 'evaluator')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('one entry of type "evaluation"'),
    });
    // A failed evaluator gives its reason, not scores.
    expect(read({ status: 'failed', findings: 'No proposals reached me', error: 'nothing to rank' }, 'brainstorm', 'evaluator').ok).toBe(true);
  });
});
