import { describe, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../src/index.js';
import { RunEmitter, runSession, type ExecutorOption, type TaskDoneEvent } from '../../src/index.js';
import { buildSession } from '../helpers/session-builder.js';

describe('the library API', () => {
  test('the package exports these runtime values and nothing else: the rest is internal', () => {
    // A name added here is a new public API; a name removed is a breaking change.
    expect(Object.keys(api).sort()).toEqual([
      'RunEmitter',
      'WaveError',
      'artifactManifestSchema',
      'artifactRegistrySchema',
      'attemptLineSchema',
      'discoveryFileSchema',
      'discoveryLineSchema',
      'main',
      'runSession',
      'sessionConfigSchema',
      'taskInputSchema',
      'taskResultSchema',
      'taskRowSchema',
    ]);
  });

  test("the package's runSession keeps report.html, as the CLI does", async () => {
    const dir = buildSession([{ id: 'A', description: 'first', role: 'r' }]);
    const summary = await runSession(dir, { executor: { type: 'command', cmd: 'echo {id}' } });
    expect(summary.exitCode).toBe(0);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  });

  test('runSession and the typed events come from the package entry, as the README shows', async () => {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'r' },
      { id: 'B', description: 'second', role: 'r', deps: 'A' },
    ]);
    const events = new RunEmitter();
    const done: TaskDoneEvent[] = [];
    events.on('task:done', (event) => done.push(event));
    const summary = await runSession(dir, { executor: { type: 'command', template: 'echo {id}' }, concurrency: 2, events });
    expect(summary.exitCode).toBe(0);
    expect(done.map((event) => [event.id, event.status, event.findings])).toEqual([
      ['A', 'completed', 'A'],
      ['B', 'completed', 'B'],
    ]);
  });

  test('a command executor is named `cmd`, as in session.json; its old name `template` still works', async () => {
    for (const executor of [
      { type: 'command', cmd: 'echo {id}' },
      { type: 'command', template: 'echo {id}' },
    ] as const) {
      const dir = buildSession([{ id: 'A', description: 'first', role: 'r' }]);
      const events = new RunEmitter();
      const done: string[] = [];
      events.on('task:done', (event) => done.push(`${event.id} ${event.findings}`));
      const summary = await runSession(dir, { executor, events });
      expect(summary.exitCode, JSON.stringify(executor)).toBe(0);
      expect(summary.stopped).toBeUndefined();
      expect(done).toEqual(['A A']);
    }
  });

  test('`cmd` and `template` with different values, or neither, are refused', async () => {
    const dir = buildSession([{ id: 'A', description: 'first', role: 'r' }]);
    const both = { type: 'command', cmd: 'echo {id}', template: 'echo other' } as unknown as ExecutorOption;
    await expect(runSession(dir, { executor: both })).rejects.toMatchObject({ code: 'USAGE', message: expect.stringMatching(/executor\.cmd/) });
    const neither = { type: 'command' } as unknown as ExecutorOption;
    await expect(runSession(dir, { executor: neither })).rejects.toMatchObject({
      code: 'USAGE',
      message: 'Expected `executor.cmd` to be a shell command template, got `undefined` (undefined)',
    });
  });
});
