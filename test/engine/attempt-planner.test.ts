/**
 * The attempt planner: a task's prev_context is computed once and shared by its requests
 * and its wave file's cell, under both schedules and across a retry. The run's real chain
 * is used (Scheduler → OutcomeSink → KnowledgeSink), with a runner that answers at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { RunEmitter } from '../../src/events/events.js';
import type { WorkerReply } from '../../src/executors/messages.js';
import { buildPrevContext } from '../../src/graph/prev-context.js';
import { WaveContexts } from '../../src/report/wave-contexts.js';
import { OutcomeSink } from '../../src/run/record/outcome-sink.js';
import { PrevContexts } from '../../src/run/prev-contexts.js';
import { Scheduler } from '../../src/run/scheduler.js';
import { Journal } from '../../src/session/journal.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { knowledgeSinkOver } from '../helpers/knowledge-sink.js';
import { tasksCsv } from '../helpers/session-builder.js';

// The real function, counted: each call is one computation of a prev_context.
vi.mock('../../src/graph/prev-context.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/graph/prev-context.js')>();
  return { ...real, buildPrevContext: vi.fn(real.buildPrevContext) };
});

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Rows = Parameters<typeof tasksCsv>[0];

/** A and B in wave 1; C and D in wave 2, taking context from both; C fails once and is retried. */
const kSession: Rows = [
  { id: 'A', description: 'a', role: 'r', wave: '1' },
  { id: 'B', description: 'b', role: 'r', wave: '1' },
  { id: 'C', description: 'c', role: 'r', wave: '2', deps: 'A', context_from: 'A;B' },
  { id: 'D', description: 'd', role: 'r', wave: '2', deps: 'B', context_from: 'B;A' },
];

async function run(schedule: 'waves' | 'eager', rows: Rows = kSession) {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-planner-'));
  dirs.push(dir);
  const table = parseTasks(tasksCsv(rows));
  const waves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
  const told = new WaveContexts();
  const knowledge = knowledgeSinkOver(dir, table, { waveContexts: told });
  const journal = new Journal(dir, undefined, { attempts: true });
  const requested = new Map<string, string[]>();
  const runTask = (request: { task: { id: string; attempt: number; prev_context: string } }): Promise<WorkerReply> => {
    const { id, attempt, prev_context } = request.task;
    requested.set(id, [...(requested.get(id) ?? []), prev_context]);
    if (id === 'C' && attempt === 1) return Promise.resolve({ kind: 'error', errorClass: 'transient', error: 'busy' });
    const findings = `found by ${id}`;
    const discovery = { taskId: id, role: 'r', status: 'completed' as const, findings, error: null, artifacts: [] };
    return Promise.resolve(knowledge.attemptFiles(id, finishedAttempt({ findings, discovery })));
  };
  vi.mocked(buildPrevContext).mockClear();
  const scheduler = new Scheduler(
    table.rows,
    waves,
    new Set(waves.keys()),
    {
      executor: { type: 'command', template: 'true' },
      sessionDir: dir,
      concurrency: 1,
      schedule,
      retries: 2,
      retryBaseMs: 1,
      timeoutMs: 0,
      prevContextCap: 16000,
      halt: undefined,
    },
    { runTask, runInteractive: () => Promise.reject(new Error('no interactive task here')) },
    new RunEmitter(),
    new OutcomeSink({ journal, knowledge, guarded: (work) => work() }),
  );
  const outcome = await scheduler.run();
  journal.close();
  return { outcome, requested, calls: vi.mocked(buildPrevContext).mock.calls.length, fileCells: new WaveContexts().read(dir, table.format), told: told.read(dir, table.format) };
}

describe.each(['waves', 'eager'] as const)('the attempt planner, schedule %s', (schedule) => {
  test("each task's prev_context is computed once: its requests and its wave file's cell hold the same", async () => {
    const { outcome, requested, calls, fileCells, told } = await run(schedule);
    expect(outcome.stopped).toBeUndefined();
    expect(requested.get('C')).toEqual(['[Task A] found by A\n[Task B] found by B', '[Task A] found by A\n[Task B] found by B']);
    expect(requested.get('D')).toEqual(['[Task B] found by B\n[Task A] found by A']);
    // Every attempt's request holds what the task's wave file holds.
    for (const [id, contexts] of requested) for (const context of contexts) expect(fileCells.get(id)).toBe(context);
    expect([...told]).toEqual([...fileCells]);
    // Four tasks, five attempts, four wave file cells: four computations, one per task.
    expect(calls).toBe(4);
  });
});

describe('the attempt planner and a context source of the same wave', () => {
  // validate refuses it in tasks.csv, but an interactive task may rewire a pending task so
  // (checkChanges does not look at context_from). Under `waves` the wave file is written as
  // the wave opens, before the source finished; the task waits for its source, and its
  // request has the source's findings, as before the planner.
  test('the request is not given the text the wave file was written with before the source finished', async () => {
    const { outcome, requested, fileCells } = await run('waves', [
      { id: 'A', description: 'a', role: 'r', wave: '1' },
      { id: 'X', description: 'x', role: 'r', wave: '1', context_from: 'A' },
    ]);
    expect(outcome.stopped).toBeUndefined();
    expect(fileCells.get('X')).toBe('No previous context available');
    expect(requested.get('X')).toEqual(['[Task A] found by A']);
  });
});

describe('PrevContexts', () => {
  const rows = () =>
    new Map(
      parseTasks(
        tasksCsv([
          { id: 'A', description: 'a', role: 'r', status: 'completed', findings: 'a found' },
          { id: 'B', description: 'b', role: 'r', status: 'completed', findings: 'b found' },
          { id: 'C', description: 'c', role: 'r', context_from: 'A' },
        ]),
      ).rows.map((row) => [row.id, row]),
    );

  test('a task rewired to other sources (an interactive change) gets the text of its new cell', () => {
    const byId = rows();
    const contexts = new PrevContexts((id) => byId.get(id), 16000);
    const c = byId.get('C')!;
    expect(contexts.of(c)).toBe('[Task A] a found');
    c.context_from = 'B';
    expect(contexts.of(c)).toBe('[Task B] b found');
  });

  test('a text is held until the task is finished and its wave file written, then let go', () => {
    const byId = rows();
    const contexts = new PrevContexts((id) => byId.get(id), 16000);
    const c = byId.get('C')!;
    const calls = () => vi.mocked(buildPrevContext).mock.calls.length;
    vi.mocked(buildPrevContext).mockClear();
    contexts.of(c);
    contexts.finished('C');
    // Finished before its wave file (eager): the wave file still gets the same text, unbuilt.
    expect(contexts.forWaveFile([{ ...c, status: 'completed' }])[0]!.prevContext).toBe('[Task A] a found');
    expect(calls()).toBe(1);
    contexts.of(c);
    expect(calls()).toBe(2);
    // In its wave file first (waves), then finished.
    contexts.forWaveFile([c]);
    contexts.of(c);
    expect(calls()).toBe(2);
    contexts.finished('C');
    contexts.of(c);
    expect(calls()).toBe(3);
  });
});
