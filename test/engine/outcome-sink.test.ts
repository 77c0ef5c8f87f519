import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { emptyRow } from '../../src/core/task.js';
import type { TaskRow } from '../../src/core/task.js';
import { RunEmitter, type RunEvents, type TaskDoneEvent } from '../../src/events/events.js';
import { Journal, readJournal, type JournalEntry } from '../../src/session/journal.js';
import { OutcomeSink, type OutcomeSinkSetup } from '../../src/run/record/outcome-sink.js';
import { RunTally } from '../../src/run/run-tally.js';

const kDone = {
  wave: 1,
  findings: 'found',
  gc_signal: '',
  severity_summary: '',
  error: '',
  attempts: 2,
  durationMs: 5,
} as const;

/** The changes of a small run: a retried, b added by an interactive task and c rewired, b skipped. */
const kRun: { [K in keyof RunEvents]: [K, ...RunEvents[K]] }[keyof RunEvents][] = [
  ['task:start', { id: 'a', wave: 1, attempt: 1 }],
  ['task:retry', { id: 'a', attempt: 1, errorClass: 'transient', error: 'busy', delayMs: 10 }],
  ['task:start', { id: 'a', wave: 1, attempt: 2 }],
  ['task:done', { id: 'a', status: 'completed', ...kDone }],
  [
    'tasks:changed',
    {
      added: [{ ...emptyRow(), id: 'b', title: 'B', description: 'added', role: 'r' }],
      updated: [{ id: 'c', deps: 'b' }],
      removed: [],
      waveCount: 2,
    },
  ],
  ['task:done', { id: 'b', status: 'skipped', ...kDone, findings: '', error: 'Dependency failed or skipped', attempts: 0 }],
];

/** A finished task's row, as the scheduler hands it to the sink. */
function rowOf(event: TaskDoneEvent): TaskRow {
  return { ...emptyRow(), id: event.id, status: event.status, findings: event.findings, error: event.error };
}

/** Tells each change of `run` to the sink, as the scheduler does. */
function record(sink: OutcomeSink, run: typeof kRun): void {
  for (const [name, event] of run) {
    if (name === 'task:start') sink.started(event as RunEvents['task:start'][0]);
    else if (name === 'task:retry') sink.retried(event as RunEvents['task:retry'][0]);
    else if (name === 'task:done') sink.finished(rowOf(event as TaskDoneEvent), undefined, event as TaskDoneEvent);
    else if (name === 'tasks:changed') sink.tasksChanged({ ...(event as RunEvents['tasks:changed'][0]), by: 'task', previous: [] });
  }
}

/** Emits each change of `run` on `events`. */
function emitRun(events: RunEmitter, run: typeof kRun = kRun): void {
  for (const [name, ...args] of run) (events.emit as (name: string, ...args: unknown[]) => boolean)(name, ...args);
}

function sinkOn(journal: Journal, setup: Partial<OutcomeSinkSetup> = {}): OutcomeSink {
  return new OutcomeSink({
    journal,
    knowledge: { taskFinished: () => {}, waveReady: () => {} },
    guarded: (work) => work(),
    ...setup,
  });
}

function entryNames(entries: readonly JournalEntry[]): string[] {
  return entries.map((entry) => ('id' in entry ? `${entry.type} ${entry.id}` : `${entry.type} ${entry.row['id']}`));
}

describe('OutcomeSink', () => {
  test('journals starts, finishes, added and rewired tasks, and one attempts.ndjson line per attempt', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-outcome-sink-'));
    const journal = new Journal(dir, undefined, { attempts: true });
    record(sinkOn(journal), kRun);
    journal.close();
    const entries = readJournal(dir);
    expect(entryNames(entries)).toEqual(['start a', 'start a', 'finish a', 'add b', 'update c', 'finish b']);
    expect(entries[2]).toEqual({ type: 'finish', id: 'a', status: 'completed', findings: 'found', gc_signal: '', severity_summary: '', error: '' });
    expect(entries[4]).toEqual({ type: 'update', id: 'c', deps: 'b' });
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    // b was skipped without running: no attempt.
    expect(attempts.map((line) => [line.task, line.attempt, line.outcome])).toEqual([
      ['a', 1, 'retried'],
      ['a', 2, 'completed'],
    ]);
  });

  test('a finish, a retry and a change are in the files when the call returns, not at the next group commit; the knowledge files come before the finish entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-outcome-sink-'));
    const journal = new Journal(dir, undefined, { attempts: true });
    const atKnowledge: string[][] = [];
    const sink = sinkOn(journal, {
      knowledge: { taskFinished: () => atKnowledge.push(entryNames(readJournal(dir))), waveReady: () => {} },
    });
    const seen: string[][] = [];
    for (const change of kRun) {
      record(sink, [change]);
      seen.push(entryNames(readJournal(dir)));
    }
    // A start waits for the group commit (or the next write): it is no result.
    expect(seen).toEqual([
      [],
      ['start a'],
      ['start a'],
      ['start a', 'start a', 'finish a'],
      ['start a', 'start a', 'finish a', 'add b', 'update c'],
      ['start a', 'start a', 'finish a', 'add b', 'update c', 'finish b'],
    ]);
    // A crash between the two runs the task again rather than keep its result without its files.
    expect(atKnowledge).toEqual([
      ['start a'],
      ['start a', 'start a', 'finish a', 'add b', 'update c'],
    ]);
    expect(readFileSync(join(dir, 'attempts.ndjson'), 'utf8').trim().split('\n')).toHaveLength(2);
    journal.close();
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

describe('OutcomeSink with jobs', () => {
  test('a start entry records the job of its attempt, a finish entry the job whose reply finished it, and none for a task that ran no job', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-outcome-sink-'));
    const journal = new Journal(dir, undefined, { attempts: true });
    const asked: string[] = [];
    const sink = sinkOn(journal, {
      jobs: {
        started: (task, attempt) => `sid.r1.${task}.a${attempt}`,
        finished: (task, attempt) => {
          asked.push(`${task}#${attempt}`);
          return task === 'a' ? `sid.r1.${task}.a${attempt}` : undefined;
        },
      },
    });
    record(sink, [...kRun, ['task:done', { id: 'c', status: 'completed', ...kDone, attempts: 1 }]]);
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
