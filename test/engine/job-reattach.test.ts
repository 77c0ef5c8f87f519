import { describe, expect, it } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { jobsOut, jobsToReattach } from '../../src/run/job-reattach.js';
import type { JournalEntry } from '../../src/session/journal.js';

function row(id: string, status: TaskRow['status']): TaskRow {
  return { ...emptyRow(), id, title: id, description: id, role: 'r', status };
}

describe('jobsToReattach', () => {
  it("takes the last journaled job of each task still to run, of an attempt 1 only, and none of a task the run resets", () => {
    const entries: JournalEntry[] = [
      { type: 'start', id: 'a', attempt: 1, job: 's.r1.a.a1' },
      { type: 'start', id: 'b', attempt: 1, job: 's.r1.b.a1' },
      { type: 'start', id: 'b', attempt: 2, job: 's.r1.b.a2' },
      { type: 'start', id: 'c', attempt: 1, job: 's.r1.c.a1' },
      { type: 'finish', id: 'c', status: 'completed', findings: '', gc_signal: '', severity_summary: '', error: '' },
      { type: 'start', id: 'd', attempt: 1, job: 's.r1.d.a1' },
      { type: 'start', id: 'e', attempt: 1 },
      { type: 'start', id: 'f', attempt: 1, job: 's.r1.f.a1' },
    ];
    const rows = [row('a', 'pending'), row('b', 'pending'), row('c', 'pending'), row('d', 'pending'), row('e', 'pending'), row('f', 'completed')];
    // a: awaited again. b: its last attempt was a 2nd. c: finished (a rerun reset it). d: reset by the run. e: ran no job. f: done.
    expect(jobsToReattach(entries, rows, new Set(['d']))).toEqual([{ type: 'start', id: 'a', attempt: 1, job: 's.r1.a.a1' }]);
  });
});

describe('jobsOut', () => {
  it("names each task's job out: its last start entry's, until it finishes; none for a start that names no job", () => {
    const entries: JournalEntry[] = [
      { type: 'start', id: 'a', attempt: 1, job: 's.r1.a.a1' },
      { type: 'start', id: 'b', attempt: 1, job: 's.r1.b.a1' },
      { type: 'start', id: 'b', attempt: 2, job: 's.r1.b.a2' },
      { type: 'start', id: 'c', attempt: 1, job: 's.r1.c.a1' },
      { type: 'finish', id: 'c', status: 'completed', findings: '', gc_signal: '', severity_summary: '', error: '' },
      { type: 'start', id: 'e', attempt: 1 },
    ];
    expect(jobsOut(entries)).toEqual(new Map([['a', 's.r1.a.a1'], ['b', 's.r1.b.a2']]));
  });
});
