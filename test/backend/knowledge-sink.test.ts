/**
 * The knowledge sink: what a run writes into the session folder about what its tasks
 * produced, on the main thread. The run's own tests (test/e2e, test/knowledge) cover it
 * through whole runs; these pin the cases a run reaches only through a broken disk.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskLimits } from '../../src/executors/messages.js';
import { WaveContexts } from '../../src/report/wave-contexts.js';
import { knowledgeSinkOver } from '../helpers/knowledge-sink.js';

function sink(sessionDir: string, warnings: string[] = [], limits: TaskLimits = {}) {
  const table = parseTasks('id,description,role,wave,status,findings,context_from\nT,d,r,1,pending,,\n');
  return knowledgeSinkOver(sessionDir, table, { limits, warn: (message) => warnings.push(message) });
}

const reply = () =>
  finishedAttempt({
    artifacts: [{ name: 'notes', content: 'the notes' }],
    discovery: { taskId: 'T', role: 'r', status: 'completed', findings: 'f', error: null, artifacts: ['artifacts/T/notes.md'] },
    usage: { prompt_tokens: 3, completion_tokens: 4 },
    notes: ['stdout cut: …', 'an artifact note'],
    attemptNotes: ['stdout cut: …'],
    thread: 7,
  });

describe('KnowledgeSink.attemptFiles', () => {
  test('writes the artifacts and the discovery file, and answers with their paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    const written = sink(dir).attemptFiles('T', reply());
    expect(written).toMatchObject({ kind: 'finished', artifacts: ['artifacts/T/notes.md'], notes: ['stdout cut: …', 'an artifact note'], thread: 7 });
    expect(written).not.toHaveProperty('discovery');
    expect(readFileSync(join(dir, 'artifacts', 'T', 'notes.md'), 'utf8')).toBe('the notes');
    expect(JSON.parse(readFileSync(join(dir, 'discoveries', 'T.json'), 'utf8'))).toMatchObject({ artifacts_produced: ['artifacts/T/notes.md'] });
  });

  test('a file in the way of artifacts/ is the folder at fault: class io, keeping the notes of the attempt, not of its files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    writeFileSync(join(dir, 'artifacts'), 'in the way');
    const written = sink(dir).attemptFiles('T', reply());
    expect(written).toEqual({
      kind: 'error',
      errorClass: 'io',
      error: expect.stringMatching(/artifacts/),
      usage: { prompt_tokens: 3, completion_tokens: 4 },
      notes: ['stdout cut: …'],
      thread: 7,
    });
    expect(existsSync(join(dir, 'discoveries'))).toBe(false);
  });

  test('a symlink out of the session fails the task (not io), and nothing is written outside', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    const outside = mkdtempSync(join(tmpdir(), 'csv-wave-outside-'));
    symlinkSync(outside, join(dir, 'artifacts'));
    const written = sink(dir).attemptFiles('T', reply());
    expect(written).toMatchObject({ kind: 'error', errorClass: 'task-failure' });
    expect(existsSync(join(outside, 'T'))).toBe(false);
  });
});

test("a reply past the run's caps, which the sink was given, is refused and writes nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
  const two = { ...reply(), artifacts: [{ name: 'a', content: 'a' }, { name: 'b', content: 'b' }] };
  expect(sink(dir, [], { maxArtifactsPerTask: 2 }).attemptFiles('T', two)).toMatchObject({ kind: 'finished' });
  const other = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
  expect(sink(other, [], { maxArtifactsPerTask: 1 }).attemptFiles('T', two)).toMatchObject({
    kind: 'error',
    errorClass: 'invalid-output',
    error: expect.stringMatching(/past the cap of 1 per task \(max_artifacts_per_task\)/),
  });
  expect(existsSync(join(other, 'artifacts'))).toBe(false);
});

test('a run after another in the same process writes into folders removed in between (init --force)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
  expect(sink(dir).attemptFiles('T', reply())).toMatchObject({ kind: 'finished' });
  rmSync(join(dir, 'artifacts'), { recursive: true });
  rmSync(join(dir, 'discoveries'), { recursive: true });
  expect(sink(dir).attemptFiles('T', reply())).toMatchObject({ kind: 'finished', artifacts: ['artifacts/T/notes.md'] });
  expect(existsSync(join(dir, 'discoveries', 'T.json'))).toBe(true);
});

describe('KnowledgeSink.taskFinished', () => {
  test('a finished task: its notes are warnings naming it, its discoveries, wisdom and usage are recorded', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    const warnings: string[] = [];
    const knowledge = sink(dir, warnings);
    const done = knowledge.attemptFiles('T', { ...reply(), discoveries: [{ type: 'idea', data: { title: 'x' } }], wisdom: { learnings: ['a lesson'] } });
    knowledge.taskFinished({ id: 'T', description: 'd', role: 'r', status: 'completed', findings: 'f', error: '' } as never, done);
    expect(warnings).toEqual(['T: stdout cut: …', 'T: an artifact note']);
    expect(readFileSync(join(dir, 'discoveries.ndjson'), 'utf8')).toContain('"title":"x"');
    expect(readFileSync(join(dir, 'wisdom', 'learnings.md'), 'utf8')).toBe('- [T] a lesson\n');
    expect(readFileSync(join(dir, 'usage.ndjson'), 'utf8')).toContain('"prompt_tokens":3');
  });

  test('a failed task without a result gets its discovery file; a skipped one does not under when-rich', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    const knowledge = sink(dir);
    knowledge.taskFinished({ id: 'F', role: 'r', status: 'failed', error: 'boom' } as never, { kind: 'error', errorClass: 'task-failure', error: 'boom' });
    knowledge.taskFinished({ id: 'S', role: 'r', status: 'skipped', error: 'Dependency failed: F' } as never, undefined);
    expect(JSON.parse(readFileSync(join(dir, 'discoveries', 'F.json'), 'utf8'))).toMatchObject({ task_id: 'F', status: 'failed', error: 'boom' });
    expect(existsSync(join(dir, 'discoveries', 'S.json'))).toBe(false);
  });
});

describe('KnowledgeSink.waveReady', () => {
  test("writes the wave's file from the rows as they stand", () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    sink(dir).waveReady(1);
    expect(readFileSync(join(dir, 'wave-1.csv'), 'utf8')).toMatch(/"T"/);
    expect(readFileSync(join(dir, 'wave-1.csv'), 'utf8')).toContain('No previous context available');
  });

  test('tells report.html the prev_context cells it wrote, the same as parsing the file gives', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-sink-'));
    // Findings that the file quotes, escapes and guards: a formula start, quotes, a line break, a delimiter.
    const table = parseTasks(
      'id,description,role,wave,status,findings,context_from\n' +
        'A,d,r,1,completed,"=SUM(1) says ""hi""\nline two, end",\n' +
        'B,d,r,2,completed,plain,\n' +
        'C,d,r,3,pending,,A;B\n' +
        'D,d,r,3,pending,,\n',
    );
    const told = new WaveContexts();
    const knowledge = knowledgeSinkOver(dir, table, { waveContexts: told });
    knowledge.waveReady(3);
    const parsed = new WaveContexts().read(dir, table.format);
    expect(parsed.get('C')).toContain('[Task A] =SUM(1) says "hi"\nline two, end');
    expect([...told.read(dir, table.format)]).toEqual([...parsed]);
  });
});
