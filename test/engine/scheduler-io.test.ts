import { describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { RunEmitter } from '../../src/events/events.js';
import { Scheduler } from '../../src/run/scheduler.js';
import type { WorkerReply } from '../../src/executors/messages.js';
import { tasksCsv } from '../helpers/session-builder.js';

describe('Scheduler and an attempt of error class io', () => {
  it('stops with reason io, the task pending, its dependent neither skipped nor started, nothing recorded as finished', async () => {
    const { rows } = parseTasks(
      tasksCsv([
        { id: 'a', description: 'first', role: 'r' },
        { id: 'b', description: 'after a', role: 'r', deps: 'a' },
      ]),
    );
    const started: string[] = [];
    const finished: string[] = [];
    const events = new RunEmitter();
    events.on('task:start', (event) => started.push(event.id));
    events.on('task:done', (event) => finished.push(event.id));
    const io: WorkerReply = { kind: 'error', errorClass: 'io', error: 'Cannot write artifacts/a/notes.md: ENOSPC' };
    const scheduler = new Scheduler(
      rows,
      new Map([
        ['a', 1],
        ['b', 2],
      ]),
      new Set(['a', 'b']),
      {
        executor: { type: 'command', template: 'true' },
        sessionDir: '/nonexistent',
        concurrency: 1,
        schedule: 'waves',
        retries: 3,
        retryBaseMs: 1,
        timeoutMs: 0,
        prevContextCap: 1000,
        halt: undefined,
      },
      {
        runTask: () => Promise.resolve(io),
        runInteractive: () => Promise.reject(new Error('no interactive task here')),
      },
      events,
      {
        started: () => {},
        retried: () => {},
        finished: (row) => finished.push(row.id),
        tasksChanged: () => {},
        waveReady: () => {},
      },
    );
    const outcome = await scheduler.run();
    expect(outcome.stopped).toBe('io');
    expect(outcome.reason).toContain('ENOSPC');
    // One attempt (io is never retried), no failure, no skip.
    expect(started).toEqual(['a']);
    expect(finished).toEqual([]);
    expect(rows.map((row) => [row.id, row.status, row.error])).toEqual([
      ['a', 'pending', ''],
      ['b', '', ''],
    ]);
  });
});
