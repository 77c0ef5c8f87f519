import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RunEmitter } from '../../src/events/events.js';
import { runSession } from '../../src/run/run-session.js';
import { runCli } from '../helpers/cli.js';
import { kScriptedAgentCmd } from '../helpers/scripted-agent.js';

describe('run summary and events when tasks are added during the run', () => {
  test('the total counts the tasks a GC round added, and tasks:changed carries the new wave count', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-summary-')), 'bs');
    expect((await runCli('init', dir, '--template', 'brainstorm', '--topic', 'T', '--cmd', kScriptedAgentCmd)).code).toBe(0);
    const events = new RunEmitter();
    const changes: { added: number; waveCount: number }[] = [];
    events.on('tasks:changed', ({ added, waveCount }) => changes.push({ added: added.length, waveCount }));
    const summary = await runSession(dir, { events });
    // 7 tasks from init, 3 appended by GC-CHECK-001's REVISION_NEEDED.
    expect(summary.total).toBe(10);
    expect(summary.counts).toMatchObject({ completed: 9, skipped: 1, failed: 0, pending: 0 });
    expect(changes).toEqual([{ added: 3, waveCount: 9 }]);
  });
});
