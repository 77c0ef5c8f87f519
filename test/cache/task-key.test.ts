import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { attemptInput } from '../../src/cache/attempt-input.js';
import { inputsOf, KeyMaker, kCacheFormat, type TaskKey, type Uncacheable } from '../../src/cache/task-key.js';
import type { AttemptRequest, ExecutorSpec, WorkerRequest } from '../../src/executors/messages.js';
import { buildUpstream } from '../../src/knowledge/upstream.js';
import type { PipelineName } from '../../src/schema/session.js';
import { SecretScrubber } from '../../src/text/secret-scrubber.js';
import { buildSession } from '../helpers/session-builder.js';

// Issue 25 item 1: the input key of an attempt. One case per input of the key: a change of
// an input is a miss (another key), a change of anything else a hit (the same key).

const kDiscovery = {
  task_id: 'A',
  worker: 'A',
  timestamp: '2026-12-01T10:00:00.000Z',
  type: 'writer',
  status: 'completed',
  findings: 'a found',
  quality_score: null,
  supervision_verdict: null,
  error: null,
  data: { key_findings: ['one'], decisions: [], files_modified: [], verification: null },
  artifacts_produced: ['artifacts/A/notes.md'],
};

/** A session folder with a dependency A that left a discovery file, an artifact, wisdom, a board line, a module and templates. */
function folder(): string {
  return buildSession(null, {
    files: {
      'discoveries/A.json': JSON.stringify(kDiscovery),
      'artifacts/A/notes.md': 'the notes of A',
      'wisdom/learnings.md': '- [A] learnt\n',
      'discoveries.ndjson': `${JSON.stringify({ ts: 't', worker: 'A', type: 'idea', data: { title: 'an idea' } })}\n`,
      'task.mjs': 'export default async () => ({ status: "completed", findings: "ok" });\n',
      'prompts/generic/writer.md': 'Task {id}: {description}\n{prev_context}\n{upstream}\n{topic}\n',
      'prompts/generic/reader.md': 'Task {id}: {description}\n{prev_context}\n{discoveries}\n{wisdom}\n',
    },
  });
}

interface Case {
  executor: ExecutorSpec;
  row: Record<string, string>;
  deps: { id: string; status: string; findings: string }[];
  prevContext: string;
  pipeline: PipelineName;
  topic: string;
  limits: AttemptRequest['limits'];
  workdir: AttemptRequest['workdir'];
  /** What the session's rows say of a context source. */
  sources: Record<string, { status: string; findings: string }>;
  attempt: number;
  wave: number;
  timeoutMs: number;
  isolated: boolean;
  maxBudgetUsd: number | undefined;
}

function base(_dir: string): Case {
  return {
    executor: { type: 'command', template: 'echo {description}' },
    row: { id: 'B', title: 'B', description: 'write it', role: 'writer', deps: 'A', context_from: 'A', exec_mode: 'csv-wave', wave: '2', status: 'in_progress', findings: '', error: '', gc_signal: '', severity_summary: '', priority: '' },
    deps: [{ id: 'A', status: 'completed', findings: 'a found' }],
    prevContext: '[Task A] a found',
    pipeline: 'generic',
    topic: '',
    limits: { maxStdoutBytes: 1 << 20, maxArtifactsPerTask: 20, maxArtifactBytes: 10 << 20 },
    workdir: undefined,
    sources: { A: { status: 'completed', findings: 'a found' } },
    attempt: 1,
    wave: 2,
    timeoutMs: 0,
    isolated: false,
    maxBudgetUsd: undefined,
  };
}

/** The attempt a run would send for the case, built as a run builds it (attemptInput), and its key. */
function keyOf(dir: string, given: Case, scrubber = new SecretScrubber([])): TaskKey | Uncacheable {
  const request: WorkerRequest = {
    executor: given.executor,
    task: { id: given.row['id']!, wave: given.wave, attempt: given.attempt, session: dir, row: given.row, prev_context: given.prevContext },
    deps: given.deps,
    timeoutMs: given.timeoutMs,
    ...(given.isolated ? { isolated: true } : {}),
  };
  const attempt = attemptInput(request, {
    sessionDir: dir,
    pipeline: given.pipeline,
    topic: given.topic,
    limits: given.limits ?? {},
    upstream: (deps) => buildUpstream(dir, deps),
    ...(given.workdir === undefined ? {} : { workdir: () => given.workdir }),
    ...(given.maxBudgetUsd === undefined ? {} : { budgetLeftUsd: () => given.maxBudgetUsd }),
  });
  return new KeyMaker({ sessionDir: dir, lookup: (id) => given.sources[id], scrubber }).keyOf(attempt);
}

function key(dir: string, given: Case): TaskKey {
  const made = keyOf(dir, given);
  if ('uncacheable' in made) throw new Error(made.uncacheable);
  return made;
}

const openai = (dir: string, more: object = {}): ExecutorSpec => ({ type: 'openai', model: 'm', baseUrl: 'http://127.0.0.1:9/v1', promptsDir: join(dir, 'prompts'), ...more });
const codex = (more: object = {}): ExecutorSpec => ({ type: 'codex', model: 'gpt-x', ...more }) as ExecutorSpec;

type Change = (c: Case, dir: string) => void;
const none: Change = () => {};
const useOpenai: Change = (c, dir) => (c.executor = openai(dir));
const useReader: Change = (c, dir) => ((c.executor = openai(dir)), (c.row['role'] = 'reader'));
const useCodex: Change = (c) => (c.executor = codex());

/** The inputs of the key: after `setup`, changing any one makes another key (a miss). */
const kMisses: [string, Change, Change][] = [
  ['the command template', none, (c) => (c.executor = { type: 'command', template: 'echo {title}' })],
  ['the output mode', none, (c) => (c.executor = { type: 'command', template: 'echo {description}', output: 'text' })],
  ['the module file\'s content', (c, dir) => (c.executor = { type: 'module', path: join(dir, 'task.mjs') }), (_c, dir) => writeFileSync(join(dir, 'task.mjs'), 'export default async () => ({ status: "completed", findings: "other" });\n')],
  ['the model', useOpenai, (c, dir) => (c.executor = openai(dir, { model: 'other' }))],
  ['the base URL', useOpenai, (c, dir) => (c.executor = openai(dir, { baseUrl: 'http://127.0.0.1:10/v1' }))],
  ['max tokens', useOpenai, (c, dir) => (c.executor = openai(dir, { maxTokens: 64 }))],
  ['the context window', useOpenai, (c, dir) => (c.executor = openai(dir, { contextWindow: 4096 }))],
  ['an agent\'s model, from the row\'s model cell', useCodex, (c) => (c.row['model'] = 'gpt-other')],
  ['an agent\'s effort, from its role\'s entry', useCodex, (c) => (c.executor = codex({ roles: { writer: { effort: 'high' } } }))],
  ['an agent\'s sandbox', useCodex, (c) => (c.executor = codex({ sandbox: 'workspace-write' }))],
  ['the description cell', none, (c) => (c.row['description'] = 'write it again')],
  ['a column of the user\'s own', none, (c) => (c.row['file'] = 'texts/a.txt')],
  ['the title cell', none, (c) => (c.row['title'] = 'B2')],
  ['the deps cell', none, (c) => (c.row['deps'] = 'A;')],
  ['prev_context', none, (c) => (c.prevContext = '[Task A] a found, then more')],
  ['a context source\'s findings', none, (c) => (c.sources = { A: { status: 'completed', findings: 'a found again' } })],
  ['a dependency\'s status', none, (c) => (c.deps = [{ id: 'A', status: 'skipped', findings: 'a found' }])],
  ['a dependency\'s findings', none, (c) => (c.deps = [{ id: 'A', status: 'completed', findings: 'a found 2' }])],
  ['a dependency\'s discovery file', none, (_c, dir) => writeFileSync(join(dir, 'discoveries/A.json'), JSON.stringify({ ...kDiscovery, data: { ...kDiscovery.data, key_findings: ['two'] } }))],
  ['the content of a dependency\'s artifact', none, (_c, dir) => writeFileSync(join(dir, 'artifacts/A/notes.md'), 'the notes of A, edited')],
  ['a dependency\'s artifact gone missing (the upstream warnings)', none, (_c, dir) => writeFileSync(join(dir, 'discoveries/A.json'), JSON.stringify({ ...kDiscovery, artifacts_produced: ['artifacts/A/notes.md', 'artifacts/A/gone.md'] }))],
  ['the output limits', none, (c) => (c.limits = { ...c.limits, maxStdoutBytes: 4096 })],
  ['the working folder (--workdir task)', none, (c) => (c.workdir = { mode: 'task' })],
  ['the pipeline', none, (c) => (c.pipeline = 'brainstorm')],
  ['the role\'s template file', useOpenai, (_c, dir) => writeFileSync(join(dir, 'prompts/generic/writer.md'), 'Task {id}, again: {description}\n{prev_context}\n{topic}\n')],
  ['the topic, which the template shows', useOpenai, (c) => (c.topic = 'Cheaper buses')],
  ['the discoveries board, which the template shows', useReader, (_c, dir) => writeFileSync(join(dir, 'discoveries.ndjson'), `${JSON.stringify({ ts: 't', worker: 'A', type: 'idea', data: { title: 'another idea' } })}\n`)],
  ['the wisdom, which the template shows', useReader, (_c, dir) => writeFileSync(join(dir, 'wisdom/learnings.md'), '- [A] learnt\n- [A] learnt more\n')],
];

/** What is not an input: after `setup`, changing it keeps the key (a hit). */
const kHits: [string, Change, Change][] = [
  ['the attempt number', none, (c) => (c.attempt = 3)],
  ['the wave number (and the wave cell)', none, (c) => ((c.wave = 5), (c.row['wave'] = '5'))],
  ['the timeout', none, (c) => (c.timeoutMs = 60_000)],
  ['isolation after a worker died', none, (c) => (c.isolated = true)],
  ['the output cells', none, (c) => Object.assign(c.row, { status: 'completed', findings: 'old', error: 'old error', gc_signal: 'x', severity_summary: 'y' })],
  ['an empty column added', none, (c) => (c.row['notes'] = '')],
  ['the order of the columns', none, (c) => (c.row = Object.fromEntries(Object.entries(c.row).reverse()))],
  ['the discovery file\'s timestamp and worker', none, (_c, dir) => writeFileSync(join(dir, 'discoveries/A.json'), JSON.stringify({ ...kDiscovery, timestamp: '2027-01-01T00:00:00.000Z', worker: 'elsewhere' }))],
  ['the discoveries board and wisdom, for a template that shows neither', useOpenai, (_c, dir) => {
    writeFileSync(join(dir, 'discoveries.ndjson'), `${JSON.stringify({ ts: 't', worker: 'A', type: 'idea', data: { title: 'another idea' } })}\n`);
    writeFileSync(join(dir, 'wisdom/decisions.md'), '- [A] decided\n');
  }],
  ['the topic, for an executor without a prompt', none, (c) => (c.topic = 'Cheaper buses')],
  ['the budget an agent may spend', useCodex, (c) => (c.maxBudgetUsd = 0.5)],
  ['the user and password in a base URL', (c, dir) => (c.executor = openai(dir, { baseUrl: 'http://alice:pw1@127.0.0.1:9/v1' })), (c, dir) => (c.executor = openai(dir, { baseUrl: 'http://bob:pw2@127.0.0.1:9/v1' }))],
];

/** The key before and after `change`, the case set up by `setup` first. */
function keysAround(setup: Change, change: Change): [TaskKey, TaskKey] {
  const dir = folder();
  const given = base(dir);
  setup(given, dir);
  const before = key(dir, given);
  const changed = { ...given, row: { ...given.row } };
  change(changed, dir);
  return [before, key(dir, changed)];
}

describe('the input key of an attempt', () => {
  test.each(kMisses)('%s is an input: another key', (_name, setup, change) => {
    const [before, after] = keysAround(setup, change);
    expect(after.key).not.toBe(before.key);
  });

  test.each(kHits)('%s is no input: the same key', (_name, setup, change) => {
    const [before, after] = keysAround(setup, change);
    expect(after.key).toBe(before.key);
  });

  test('the same session moved to another folder keeps its keys', () => {
    const one = folder();
    const other = folder();
    expect(key(other, base(other)).key).toBe(key(one, base(one)).key);
  });

  test('its inputs are named parts in the canonical order, every value a text', () => {
    const dir = folder();
    const made = key(dir, base(dir));
    const parts = inputsOf(made.inputs);
    expect([...parts.keys()]).toEqual([
      'format', 'executor', 'pipeline', 'limits',
      'cell:context_from', 'cell:deps', 'cell:description', 'cell:exec_mode', 'cell:id', 'cell:role', 'cell:title',
      'prev_context', 'ctx:A', 'dep:A',
    ]);
    expect(parts.get('format')).toBe(kCacheFormat);
    expect(parts.get('executor')).toBe('{"output":"auto","template":"echo {description}","type":"command"}');
    expect(JSON.parse(parts.get('dep:A')!)).toEqual({
      status: 'completed',
      findings: 'a found',
      discovery: { task_id: 'A', type: 'writer', status: 'completed', findings: 'a found', quality_score: null, supervision_verdict: null, error: null, data: kDiscovery.data, artifacts_produced: ['artifacts/A/notes.md'] },
      artifacts: [['artifacts/A/notes.md', expect.stringMatching(/^[0-9a-f]{64}$/)]],
    });
    // The key is the SHA-256 of that text.
    expect(made.key).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a model executor adds the template, the contract and what its template shows; the board and wisdom stay out of the input key', () => {
    const dir = folder();
    const reader = key(dir, { ...base(dir), executor: openai(dir), row: { ...base(dir).row, role: 'reader' } });
    expect([...inputsOf(reader.inputs).keys()]).toEqual(expect.arrayContaining(['template', 'contract', 'discoveries', 'wisdom']));
    expect(reader.inputKey).not.toBe(reader.key);
    // Without the digests (status's keys), the input key is the same.
    const request: WorkerRequest = { executor: openai(dir), task: { id: 'B', wave: 2, attempt: 1, session: dir, row: { ...base(dir).row, role: 'reader' }, prev_context: '[Task A] a found' }, deps: [{ id: 'A', status: 'completed', findings: 'a found' }], timeoutMs: 0 };
    const setup = { sessionDir: dir, pipeline: 'generic' as const, topic: '', limits: base(dir).limits ?? {}, upstream: (deps: readonly { id: string; status: string; findings: string }[]) => buildUpstream(dir, deps) };
    const keys = new KeyMaker({ sessionDir: dir, lookup: (id) => base(dir).sources[id], scrubber: new SecretScrubber([]) });
    const full = keys.keyOf(attemptInput(request, setup)) as TaskKey;
    const light = keys.keyOf(attemptInput(request, { ...setup, noDigests: true })) as TaskKey;
    expect(light.inputKey).toBe(full.inputKey);
    expect(light.inputKey).toBe(reader.inputKey);
    const writer = key(dir, { ...base(dir), executor: openai(dir) });
    expect([...inputsOf(writer.inputs).keys()]).toEqual(expect.arrayContaining(['template', 'contract', 'topic']));
    expect([...inputsOf(writer.inputs).keys()]).not.toContain('discoveries');
    expect(writer.inputKey).toBe(writer.key);
  });

  test('a worktree task has no key: its result is a commit', () => {
    const dir = folder();
    const made = keyOf(dir, { ...base(dir), workdir: { mode: 'worktree', repo: dir, base: 'abc', branch: 'b', replaced: 'r', path: dir, keep: false } });
    expect(made).toEqual({ uncacheable: expect.stringContaining('git worktree') });
  });

  test('a secret of the environment is in no key: its value counts as ***', () => {
    const dir = folder();
    const secret = 'sk-live-0123456789abcdef';
    const scrubber = new SecretScrubber([secret]);
    const withSecret = { ...base(dir), row: { ...base(dir).row, description: `use ${secret} to log in` } };
    const made = keyOf(dir, withSecret, scrubber) as TaskKey;
    const masked = keyOf(dir, { ...withSecret, row: { ...withSecret.row, description: 'use *** to log in' } }) as TaskKey;
    expect(made.key).toBe(masked.key);
    expect(made.inputs).not.toContain(secret);
  });
});
