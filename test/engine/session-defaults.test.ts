import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RunOptions } from '../../src/options/options.js';
import { executorFromConfig, withSessionDefaults } from '../../src/options/session-defaults.js';
import { sessionConfigSchema, type SessionConfig } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

function config(fields: Record<string, unknown>): SessionConfig {
  return sessionConfigSchema.parse(fields);
}

const kDir = '/sessions/s1';

describe('withSessionDefaults: options win, session.json fills what they leave out', () => {
  test.each<[string, Record<string, unknown>, Partial<RunOptions>, Partial<RunOptions>]>([
    ['concurrency', { concurrency: 3 }, { concurrency: 5 }, { concurrency: 3 }],
    ['timeout', { timeout: 30 }, { timeoutSeconds: 5 }, { timeoutSeconds: 30 }],
    ['retries', { retries: 0 }, { retries: 4 }, { retries: 0 }],
    ['schedule', { schedule: 'eager' }, { schedule: 'waves' }, { schedule: 'eager' }],
    ['output', { output: 'text' }, { output: 'result' }, { output: 'text' }],
    ['prev_context_cap', { prev_context_cap: 100 }, { prevContextCap: 200 }, { prevContextCap: 100 }],
    ['max_stdout_bytes', { max_stdout_bytes: 2048 }, { maxStdoutBytes: 4096 }, { maxStdoutBytes: 2048 }],
    ['max_artifacts_per_task', { max_artifacts_per_task: 2 }, { maxArtifactsPerTask: 3 }, { maxArtifactsPerTask: 2 }],
    ['max_artifact_bytes', { max_artifact_bytes: 2048 }, { maxArtifactBytes: 4096 }, { maxArtifactBytes: 2048 }],
    ['discovery_files', { discovery_files: 'when-rich' }, { discoveryFiles: 'always' }, { discoveryFiles: 'when-rich' }],
    [
      'max_discovery_line_bytes',
      { max_discovery_line_bytes: 2048 },
      { maxDiscoveryLineBytes: 4096 },
      { maxDiscoveryLineBytes: 2048 },
    ],
  ])('%s', (_key, fromFile, given, filled) => {
    expect(withSessionDefaults(given, config(fromFile), kDir)).toEqual(given);
    expect(withSessionDefaults({}, config(fromFile), kDir)).toEqual(filled);
  });

  test('a session.json without the setting leaves the option out, for the defaults to fill', () => {
    expect(withSessionDefaults({ halt: { count: 1 } }, config({}), kDir)).toEqual({ halt: { count: 1 } });
  });

  test('a relative --module path is relative to the session folder; an absolute one stays', () => {
    expect(withSessionDefaults({ executor: { type: 'module', path: 'lib/run.mjs' } }, config({}), kDir).executor).toEqual({
      type: 'module',
      path: '/sessions/s1/lib/run.mjs',
    });
    expect(withSessionDefaults({ executor: { type: 'module', path: '/opt/run.mjs' } }, config({}), kDir).executor).toEqual({
      type: 'module',
      path: '/opt/run.mjs',
    });
  });

  test("an executor given as an option wins over session.json's", () => {
    const merged = withSessionDefaults(
      { executor: { type: 'command', cmd: 'echo {id}' } },
      config({ executor: { type: 'command', cmd: 'false' } }),
      kDir,
    );
    expect(merged.executor).toEqual({ type: 'command', cmd: 'echo {id}' });
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
