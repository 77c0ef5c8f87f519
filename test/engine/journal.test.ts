import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { Journal, engineDir, readJournal, readJournalWithCarried, replayJournal, type JournalEntry } from '../../src/session/journal.js';

function sessionDir(): string {
  return mkdtempSync(join(tmpdir(), 'csv-wave-journal-'));
}

function journalText(dir: string): string {
  return readFileSync(join(engineDir(dir), 'journal.ndjson'), 'utf8');
}

function row(id: string, fields: Partial<TaskRow> = {}): TaskRow {
  return { ...emptyRow(), id, title: id, description: `do ${id}`, role: 'r', ...fields };
}

const finishA: JournalEntry = {
  type: 'finish',
  id: 'a',
  status: 'completed',
  findings: 'found =1+1',
  gc_signal: 'CONVERGED',
  severity_summary: 'high:1',
  error: '',
};

describe('Journal', () => {
  it('creates .csv-wave/journal.ndjson, buffers appends and writes them on flush', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append({ type: 'start', id: 'a', attempt: 1 });
    journal.append(finishA);
    expect(journalText(dir)).toBe('');
    journal.flush();
    expect(journalText(dir)).toBe(`${JSON.stringify({ type: 'start', id: 'a', attempt: 1 })}\n${JSON.stringify(finishA)}\n`);
    expect(readJournal(dir)).toEqual([{ type: 'start', id: 'a', attempt: 1 }, finishA]);
    journal.close();
  });

  it('flushes by itself within one turn of the event loop (group commit)', async () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append({ type: 'start', id: 'a', attempt: 1 });
    journal.append({ type: 'start', id: 'b', attempt: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(readJournal(dir).map((entry) => ('id' in entry ? entry.id : ''))).toEqual(['a', 'b']);
    journal.close();
  });

  it('checkpoint writes what is buffered, then empties the file; later appends start afresh', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append({ type: 'start', id: 'a', attempt: 1 });
    journal.checkpoint();
    expect(journalText(dir)).toBe('');
    journal.append(finishA);
    journal.flush();
    expect(readJournal(dir)).toEqual([finishA]);
    journal.close();
  });

  it('appends to what an earlier run left (nothing is lost before it is replayed)', () => {
    const dir = sessionDir();
    const first = new Journal(dir);
    first.append({ type: 'start', id: 'a', attempt: 1 });
    first.close();
    const second = new Journal(dir);
    second.append(finishA);
    second.close();
    expect(readJournal(dir)).toEqual([{ type: 'start', id: 'a', attempt: 1 }, finishA]);
  });

  it('close writes what is still buffered', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    journal.append(finishA);
    journal.close();
    expect(readJournal(dir)).toEqual([finishA]);
  });
});

describe('Journal: the jobs of attempts out (--backend bullmq)', () => {
  it('writes the start entries that name a job again after each checkpoint, until the task starts again without one or finishes', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    const left = { type: 'start', id: 'c', attempt: 1, job: 's.r000000000000.c.a1' } as const;
    journal.carryJobs([left]);
    journal.append({ type: 'start', id: 'a', attempt: 1, job: 's.r111111111111.a.a1' });
    journal.append({ type: 'start', id: 'b', attempt: 1, job: 's.r111111111111.b.a1' });
    journal.flush();
    journal.checkpoint();
    expect(readJournal(dir)).toEqual([
      left,
      { type: 'start', id: 'a', attempt: 1, job: 's.r111111111111.a.a1' },
      { type: 'start', id: 'b', attempt: 1, job: 's.r111111111111.b.a1' },
    ]);
    // a retried: its latest attempt's job; b finished; c started here with the job it was left.
    journal.append({ type: 'start', id: 'a', attempt: 2, job: 's.r111111111111.a.a2' });
    journal.append({ ...finishA, id: 'b' });
    journal.append(left);
    journal.checkpoint();
    expect(readJournal(dir)).toEqual([left, { type: 'start', id: 'a', attempt: 2, job: 's.r111111111111.a.a2' }]);
    journal.append({ ...finishA, id: 'c' });
    journal.append({ type: 'start', id: 'a', attempt: 3 });
    journal.checkpoint();
    expect(readJournal(dir)).toEqual([]);
    journal.close();
  });

  it('keeps the start entries that name a job in carried.ndjson too: a kill after the journal is emptied, before they are written back, loses none', () => {
    const dir = sessionDir();
    const journal = new Journal(dir);
    const started = { type: 'start', id: 'a', attempt: 1, job: 's.r111111111111.a.a1' } as const;
    journal.append(started);
    journal.checkpoint();
    journal.close();
    // As a kill between the emptying and the writing back would leave it.
    writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), '');
    expect(readJournal(dir)).toEqual([]);
    expect(readJournalWithCarried(dir)).toEqual([started]);
    // Once nothing is carried, the file goes.
    const next = new Journal(dir);
    next.append({ ...finishA, id: 'a' });
    next.checkpoint();
    next.close();
    expect(existsSync(join(dir, '.csv-wave', 'carried.ndjson'))).toBe(false);
  });
});

describe('readJournal', () => {
  it('is empty when the session has no journal', () => {
    expect(readJournal(sessionDir())).toEqual([]);
  });

  it('drops a torn last line (a crash in the middle of a write)', () => {
    const dir = sessionDir();
    new Journal(dir).close();
    const whole = `${JSON.stringify({ type: 'start', id: 'a', attempt: 1 })}\n${JSON.stringify(finishA)}\n`;
    const torn = JSON.stringify({ ...finishA, id: 'b' }).slice(0, 25);
    writeFileSync(join(engineDir(dir), 'journal.ndjson'), whole + torn);
    expect(readJournal(dir)).toEqual([{ type: 'start', id: 'a', attempt: 1 }, finishA]);
  });

  it('keeps reading entries written after a torn line was left by an earlier crash', () => {
    const dir = sessionDir();
    new Journal(dir).close();
    const path = join(engineDir(dir), 'journal.ndjson');
    writeFileSync(path, '{"type":"fin');
    appendFileSync(path, `\n${JSON.stringify(finishA)}\n`);
    expect(readJournal(dir)).toEqual([finishA]);
  });
});

describe('replayJournal', () => {
  it('marks started tasks in_progress and applies finish entries to the output columns', () => {
    const rows = [row('a'), row('b'), row('c', { status: 'completed', findings: 'old' })];
    const changed = replayJournal(rows, [
      { type: 'start', id: 'a', attempt: 1 },
      { type: 'start', id: 'b', attempt: 1 },
      finishA,
      { type: 'finish', id: 'b', status: 'failed', findings: '', gc_signal: '', severity_summary: '', error: 'boom' },
    ]);
    expect(changed).toBe(2);
    expect(rows[0]).toMatchObject({
      status: 'completed',
      findings: 'found =1+1',
      gc_signal: 'CONVERGED',
      severity_summary: 'high:1',
      error: '',
    });
    expect(rows[1]).toMatchObject({ status: 'failed', error: 'boom' });
    expect(rows[2]).toMatchObject({ status: 'completed', findings: 'old' });
  });

  it('applies entries in order: a start after a finish (a retry) leaves the task in_progress', () => {
    const rows = [row('a')];
    replayJournal(rows, [{ type: 'start', id: 'a', attempt: 1 }, finishA, { type: 'start', id: 'a', attempt: 2 }]);
    expect(rows[0]!.status).toBe('in_progress');
  });

  it('leaves input columns alone and ignores tasks no longer in the file', () => {
    const rows = [row('a', { title: 'Edited by a person', deps: '' })];
    const changed = replayJournal(rows, [finishA, { ...finishA, id: 'gone' }]);
    expect(changed).toBe(1);
    expect(rows[0]).toMatchObject({ title: 'Edited by a person', description: 'do a', status: 'completed' });
  });

  it('a finish that names the tasks its result skips (a converged GC check) skips those still pending, with their errors', () => {
    const rows = [row('check'), row('round'), row('done', { status: 'completed', findings: 'kept' }), row('later')];
    const skips = [
      { id: 'round', error: 'Skipped: GC converged (check)' },
      { id: 'done', error: 'Skipped: GC converged (check)' },
      { id: 'gone', error: 'Skipped: GC converged (check)' },
    ];
    const changed = replayJournal(rows, [{ ...finishA, id: 'check', skips }]);
    expect(changed).toBe(2);
    expect(rows[1]).toMatchObject({ status: 'skipped', error: 'Skipped: GC converged (check)' });
    expect(rows[2]).toMatchObject({ status: 'completed', findings: 'kept', error: '' });
    expect(rows[3]!.status).toBe('');
  });

  it('passes over skips that are not a list of ids and texts (a journal is read as found)', () => {
    const rows = [row('check'), row('round')];
    const odd = [7, 'round', { skips: 'round' }, [{ id: 'round' }, { id: 3, error: 'x' }, null]];
    for (const skips of odd) replayJournal(rows, [{ ...finishA, id: 'check', skips } as unknown as JournalEntry]);
    expect(rows[1]!.status).toBe('');
  });
});
