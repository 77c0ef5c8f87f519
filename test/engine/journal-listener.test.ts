import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { emptyRow } from '../../src/core/task.js';
import { RunEmitter } from '../../src/engine/events.js';
import { Journal, readJournal } from '../../src/engine/journal.js';
import { journalRun } from '../../src/engine/journal-listener.js';
import { RunTally } from '../../src/engine/run-tally.js';

const kDone = {
  wave: 1,
  findings: 'found',
  gc_signal: '',
  severity_summary: '',
  error: '',
  attempts: 2,
  durationMs: 5,
} as const;

/** The events of a small run: a retried, b added by an interactive task and c rewired, b skipped. */
function emitRun(events: RunEmitter): void {
  events.emit('task:start', { id: 'a', wave: 1, attempt: 1 });
  events.emit('task:retry', { id: 'a', attempt: 1, errorClass: 'transient', error: 'busy', delayMs: 10 });
  events.emit('task:start', { id: 'a', wave: 1, attempt: 2 });
  events.emit('task:done', { id: 'a', status: 'completed', ...kDone });
  events.emit('tasks:changed', {
    added: [{ ...emptyRow(), id: 'b', title: 'B', description: 'added', role: 'r' }],
    updated: [{ id: 'c', deps: 'b' }],
    waveCount: 2,
  });
  events.emit('task:done', { id: 'b', status: 'skipped', ...kDone, findings: '', error: 'Dependency failed or skipped', attempts: 0 });
}

describe('journalRun', () => {
  test('journals starts, finishes, added and rewired tasks, and one attempts.ndjson line per attempt', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-journal-run-'));
    const events = new RunEmitter();
    const journal = new Journal(dir, undefined, { attempts: true });
    journalRun(events, journal);
    emitRun(events);
    journal.close();
    const entries = readJournal(dir);
    expect(entries.map((entry) => ('id' in entry ? `${entry.type} ${entry.id}` : `${entry.type} ${entry.row['id']}`))).toEqual([
      'start a',
      'start a',
      'finish a',
      'add b',
      'update c',
      'finish b',
    ]);
    expect(entries[2]).toEqual({ type: 'finish', id: 'a', status: 'completed', findings: 'found', gc_signal: '', severity_summary: '', error: '' });
    expect(entries[4]).toEqual({ type: 'update', id: 'c', deps: 'b' });
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    // b was skipped without running: no attempt.
    expect(attempts.map((line) => [line.task, line.attempt, line.outcome])).toEqual([
      ['a', 1, 'retried'],
      ['a', 2, 'completed'],
    ]);
  });
});

describe('RunTally', () => {
  test('the summary counts the planned and added tasks, the tasks that started, the attempts, and the rows by status', () => {
    const events = new RunEmitter();
    const tally = new RunTally(events, 3);
    emitRun(events);
    const rows = [
      { ...emptyRow(), id: 'a', status: 'completed' },
      { ...emptyRow(), id: 'b', status: 'skipped' },
      { ...emptyRow(), id: 'c', status: 'pending' },
      { ...emptyRow(), id: 'd', status: 'completed' },
    ] as const;
    const summary = tally.summary(rows, 42, { stopped: 'halt', reason: 'Halted', exitCode: 1 });
    expect(summary).toEqual({
      // Three planned and one added; a ran twice, b was skipped without running.
      total: 4,
      ran: 1,
      attempts: 2,
      counts: { pending: 1, in_progress: 0, completed: 2, failed: 0, skipped: 1 },
      durationMs: 42,
      stopped: 'halt',
      reason: 'Halted',
      exitCode: 1,
    });
  });
});

describe('journalRun with jobs', () => {
  test('a start entry records the job of its attempt, a finish entry the job whose reply finished it, and none for a task that ran no job', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-journal-run-'));
    const events = new RunEmitter();
    const journal = new Journal(dir, undefined, { attempts: true });
    const asked: string[] = [];
    journalRun(events, journal, {
      started: (task, attempt) => `sid.r1.${task}.a${attempt}`,
      finished: (task, attempt) => {
        asked.push(`${task}#${attempt}`);
        return task === 'a' ? `sid.r1.${task}.a${attempt}` : undefined;
      },
    });
    emitRun(events);
    events.emit('task:done', { id: 'c', status: 'completed', ...kDone, attempts: 1 });
    journal.close();
    const entries = readJournal(dir);
    expect(entries.filter((entry) => entry.type === 'start').map((entry) => ('job' in entry ? entry.job : '-'))).toEqual(['sid.r1.a.a1', 'sid.r1.a.a2']);
    const finishes = entries.filter((entry) => entry.type === 'finish');
    expect(finishes.map((entry) => [entry.id, 'job' in entry ? entry.job : '-'])).toEqual([
      ['a', 'sid.r1.a.a2'],
      ['b', '-'],
      ['c', '-'],
    ]);
    // b was skipped without running: no attempt, no job to ask for.
    expect(asked).toEqual(['a#2', 'c#1']);
  });
});
