import { describe, expect, test } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { embedJson } from '../../src/report/page/embed-json.js';
import { groupFailures } from '../../src/report/failures.js';
import { assignLanes } from '../../src/report/lanes.js';

function row(id: string, status: string, error = '', deps = ''): TaskRow {
  return { ...emptyRow(), id, status, error, deps, description: 'd', role: 'r' };
}

describe('embedJson', () => {
  test('no cell can end the script element or the line; JSON.parse reads it back unchanged', () => {
    const hostile = { a: '</script><script>alert(1)</script>', b: '<!-- x -->', c: 'a&b>c', d: 'line\u2028para\u2029end' };
    const text = embedJson(hostile);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(hostile);
  });
});

describe('groupFailures', () => {
  test('failed tasks by class and message; skipped ones under the failed task they come from, through a chain', () => {
    const rows = [
      row('A', 'failed', 'exit 1'),
      row('B', 'failed', 'exit 1'),
      row('C', 'failed', 'timed out'),
      row('D', 'skipped', 'Dependency failed or skipped', 'A'),
      row('E', 'skipped', 'Dependency failed or skipped', 'D'),
      row('F', 'skipped', 'Dependency failed or skipped', 'C;E'),
      row('G', 'skipped', 'Skipped: GC converged (X)'),
      row('H', 'completed'),
    ];
    const classes: Record<string, string> = { A: 'task-failure', B: 'task-failure', C: 'timeout' };
    expect(groupFailures(rows, (id) => classes[id] ?? '')).toEqual([
      { kind: 'failed', errorClass: 'task-failure', message: 'exit 1', tasks: ['A', 'B'] },
      { kind: 'failed', errorClass: 'timeout', message: 'timed out', tasks: ['C'] },
      { kind: 'skipped', errorClass: '', message: 'A', tasks: ['D', 'E', 'F'] },
      { kind: 'skipped', errorClass: '', message: 'C', tasks: ['F'] },
    ]);
  });

  test('a chain of 50,000 skipped tasks needs no recursion', () => {
    const rows = [row('T0', 'failed', 'x')];
    for (let i = 1; i <= 50_000; i++) rows.push(row(`T${i}`, 'skipped', 'Dependency failed or skipped', `T${i - 1}`));
    const groups = groupFailures(rows.reverse(), () => 'task-failure');
    expect(groups.at(-1)).toMatchObject({ kind: 'skipped', message: 'T0' });
    expect(groups.at(-1)!.tasks).toHaveLength(50_000);
  });
});

describe('assignLanes', () => {
  test('no two intervals of a lane overlap, and lanes are reused once free', () => {
    const intervals = [
      { start: 0, end: 10 },
      { start: 2, end: 5 },
      { start: 5, end: 9 },
      { start: 10, end: 12 },
      { start: 3, end: 4 },
    ];
    const lanes = assignLanes(intervals);
    expect(lanes).toEqual([0, 1, 1, 0, 2]);
    for (let i = 0; i < intervals.length; i++) {
      for (let j = i + 1; j < intervals.length; j++) {
        if (lanes[i] !== lanes[j]) continue;
        expect(intervals[i]!.end <= intervals[j]!.start || intervals[j]!.end <= intervals[i]!.start).toBe(true);
      }
    }
  });
});
