import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { normalizeRunOptions, type RunOptions } from '../../src/options/options.js';
import { executorFromConfig } from '../../src/options/executor-option.js';
import { runOptionEntries } from '../../src/option-table.js';
import { sessionConfigSchema, type SessionConfig } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

function config(fields: Record<string, unknown>): SessionConfig {
  return sessionConfigSchema.parse(fields) as SessionConfig;
}

const kDir = '/sessions/s1';

const kCommand = { type: 'command', cmd: 'echo {id}' } as const;

describe('normalizeRunOptions: options over session.json over the table\'s defaults', () => {
  test.each<[string, Record<string, unknown>, Partial<RunOptions>, Partial<RunOptions>]>([
    ['concurrency', { concurrency: 3 }, { concurrency: 5 }, { concurrency: 3 }],
    ['timeout', { timeout: 30 }, { timeoutSeconds: 5 }, { timeoutSeconds: 30 }],
    ['retries', { retries: 0 }, { retries: 4 }, { retries: 0 }],
    ['schedule', { schedule: 'eager' }, { schedule: 'waves' }, { schedule: 'eager' }],
    ['prev_context_cap', { prev_context_cap: 300 }, { prevContextCap: 200 }, { prevContextCap: 300 }],
    ['max_stdout_bytes', { max_stdout_bytes: 2048 }, { maxStdoutBytes: 4096 }, { maxStdoutBytes: 2048 }],
    ['max_artifacts_per_task', { max_artifacts_per_task: 2 }, { maxArtifactsPerTask: 3 }, { maxArtifactsPerTask: 2 }],
    ['max_artifact_bytes', { max_artifact_bytes: 2048 }, { maxArtifactBytes: 4096 }, { maxArtifactBytes: 2048 }],
    ['cache', { cache: false }, { cache: 'read' }, { cache: false }],
    ['discovery_files', { discovery_files: 'when-rich' }, { discoveryFiles: 'always' }, { discoveryFiles: 'when-rich' }],
    ['max_discovery_line_bytes', { max_discovery_line_bytes: 2048 }, { maxDiscoveryLineBytes: 4096 }, { maxDiscoveryLineBytes: 2048 }],
  ])('%s', (_key, fromFile, given, filled) => {
    const session = { config: config(fromFile), dir: kDir };
    expect(normalizeRunOptions({ executor: kCommand, ...given }, session)).toMatchObject(given);
    expect(normalizeRunOptions({ executor: kCommand }, session)).toMatchObject(filled);
  });

  test("output: the option's, else session.json's, set on the command executor only when named", () => {
    const text = { config: config({ output: 'text' }), dir: kDir };
    expect(normalizeRunOptions({ executor: kCommand, output: 'result' }, text).executor).toEqual({ type: 'command', template: 'echo {id}', output: 'result' });
    expect(normalizeRunOptions({ executor: kCommand }, text).executor).toEqual({ type: 'command', template: 'echo {id}', output: 'text' });
    expect(normalizeRunOptions({ executor: kCommand }, { config: config({}), dir: kDir }).executor).toEqual({ type: 'command', template: 'echo {id}' });
  });

  test('every default is the table\'s', () => {
    const settings = normalizeRunOptions({ executor: kCommand }) as unknown as Record<string, unknown>;
    for (const [name, definition] of runOptionEntries()) {
      // The output mode is the command executor's own when not named (the same, auto).
      if (definition.default !== undefined && name !== 'output') expect(settings[name], name).toEqual(definition.default);
    }
  });

  test('a library option out of the table\'s bounds is named as the library names it', () => {
    expectWaveError(() => normalizeRunOptions({ executor: kCommand, concurrency: 0 }), {
      code: 'USAGE',
      message: 'Expected `concurrency` to be a positive integer, got `0` (number)',
    });
    expectWaveError(() => normalizeRunOptions({ executor: kCommand, halt: { count: 0 } }), {
      code: 'USAGE',
      message: 'Expected `halt` to be fail=N (N ≥ 1) or fail=N% (0 < N ≤ 100), got `{"count":0}` (object)',
    });
  });

  test('a relative --module path is relative to the session folder; an absolute one stays', () => {
    const session = { config: config({}), dir: kDir };
    expect(normalizeRunOptions({ executor: { type: 'module', path: 'lib/run.mjs' } }, session).executor).toEqual({
      type: 'module',
      path: '/sessions/s1/lib/run.mjs',
    });
    expect(normalizeRunOptions({ executor: { type: 'module', path: '/opt/run.mjs' } }, session).executor).toEqual({
      type: 'module',
      path: '/opt/run.mjs',
    });
  });

  test("an executor given as an option wins over session.json's", () => {
    const session = { config: config({ executor: { type: 'command', cmd: 'false' } }), dir: kDir };
    expect(normalizeRunOptions({ executor: kCommand }, session).executor).toEqual({ type: 'command', template: 'echo {id}' });
    expect(normalizeRunOptions({}, session).executor).toEqual({ type: 'command', template: 'false' });
  });
});

describe("executorFromConfig: session.json's executor", () => {
  test('command, openai (with and without base_url) and an absolute module path', () => {
    expect(executorFromConfig({ type: 'command', cmd: 'echo {id}' }, kDir)).toEqual({ type: 'command', template: 'echo {id}' });
    expect(executorFromConfig({ type: 'openai', model: 'm' }, kDir)).toEqual({ type: 'openai', model: 'm' });
    expect(executorFromConfig({ type: 'openai', model: 'm', base_url: 'http://127.0.0.1:9/v1' }, kDir)).toEqual({
      type: 'openai',
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    expect(executorFromConfig({ type: 'module', module: '/opt/run.mjs' }, kDir)).toEqual({ type: 'module', path: '/opt/run.mjs' });
  });

  test('codex, with its base_url and sandbox; a sandbox it does not know is refused by the schema; one without a model is INVALID_SESSION', () => {
    expect(executorFromConfig({ type: 'codex', model: 'm' }, kDir)).toEqual({ type: 'codex', model: 'm' });
    expect(executorFromConfig({ type: 'codex', model: 'm', base_url: 'http://127.0.0.1:9/v1', sandbox: 'workspace-write' }, kDir)).toEqual({
      type: 'codex',
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
      sandbox: 'workspace-write',
    });
    expect(sessionConfigSchema.safeParse({ executor: { type: 'codex', model: 'm', sandbox: 'danger-full-access' } }).success).toBe(false);
    expectWaveError(() => executorFromConfig({ type: 'codex' }, kDir), { code: 'INVALID_SESSION', message: 'session.json: executor codex needs "model"' });
  });

  test('codex takes the budgets and prices of model calls, not the answer and context limits of openai', () => {
    const session = { config: config({}), dir: kDir };
    const codex = { type: 'codex', model: 'm' } as const;
    expect(normalizeRunOptions({ executor: codex, maxTokensTotal: 1000, price: { input: 1, output: 2 } }, session)).toMatchObject({
      executor: codex,
      maxTokensTotal: 1000,
      pricing: { m: { input: 1, output: 2 } },
    });
    expectWaveError(() => normalizeRunOptions({ executor: codex, maxTokens: 100 }, session), {
      code: 'USAGE',
      message: '--max-tokens: for --executor openai only; drop them for --executor codex',
    });
  });

  test('claude, with its agent settings; one without a model is INVALID_SESSION', () => {
    expect(executorFromConfig({ type: 'claude', model: 'm', base_url: 'http://127.0.0.1:9', max_turns: 4, allowed_tools: ['Read'], effort: 'low', args: ['--x'] }, kDir)).toEqual({
      type: 'claude',
      model: 'm',
      baseUrl: 'http://127.0.0.1:9',
      maxTurns: 4,
      allowedTools: ['Read'],
      effort: 'low',
      args: ['--x'],
    });
    expectWaveError(() => executorFromConfig({ type: 'claude' }, kDir), { code: 'INVALID_SESSION', message: 'session.json: executor claude needs "model"' });
  });

  test('claude takes --max-cost without a price (it reports its cost), and refuses the answer and context limits of openai', () => {
    const session = { config: config({}), dir: kDir };
    const claude = { type: 'claude', model: 'm' } as const;
    expect(normalizeRunOptions({ executor: claude, maxCostUsd: 0.5, maxTokensTotal: 1000 }, session)).toMatchObject({ executor: claude, maxCostUsd: 0.5, maxTokensTotal: 1000 });
    expectWaveError(() => normalizeRunOptions({ executor: claude, contextWindow: 1000 }, session), {
      code: 'USAGE',
      message: '--context-window: for --executor openai only; drop them for --executor claude',
    });
  });

  test('a relative module path stays inside the session folder, through symlinks too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-defaults-'));
    mkdirSync(join(dir, 'lib'));
    expect(executorFromConfig({ type: 'module', module: 'lib/run.mjs' }, dir)).toEqual({
      type: 'module',
      path: join(dir, 'lib', 'run.mjs'),
    });
    expectWaveError(() => executorFromConfig({ type: 'module', module: '../elsewhere.mjs' }, dir), {
      code: 'INVALID_SESSION',
      message: /^session\.json: executor\.module: .*A relative module path must stay inside the session folder/s,
    });
    const outside = mkdtempSync(join(tmpdir(), 'csv-wave-outside-'));
    writeFileSync(join(outside, 'run.mjs'), 'export default () => ({});\n');
    symlinkSync(outside, join(dir, 'out'));
    expectWaveError(() => executorFromConfig({ type: 'module', module: 'out/run.mjs' }, dir), {
      code: 'INVALID_SESSION',
      message: /outside the session folder/,
    });
  });

  test.each([
    ['command', '"cmd"'],
    ['module', '"module"'],
    ['openai', '"model"'],
  ] as const)('executor %s without its field is refused, naming it', (type, field) => {
    expectWaveError(() => executorFromConfig({ type }, kDir), {
      code: 'INVALID_SESSION',
      message: `session.json: executor ${type} needs ${field}`,
    });
  });
});
