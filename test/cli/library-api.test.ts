import { describe, expect, test } from 'vitest';
import { RunEmitter, runSession, type TaskDoneEvent } from '../../src/index.js';
import { genericSession } from '../helpers/generic-session.js';

describe('the library API', () => {
  test('runSession and the typed events come from the package entry, as the README shows', async () => {
    const dir = genericSession([
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
});
