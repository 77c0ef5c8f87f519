import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import fc from 'fast-check';
import { embedJson, embedJsonParts } from '../../src/report/page/embed-json.js';
import { groupFailures } from '../../src/report/failures.js';
import { buildReportData } from '../../src/report/report-data.js';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import { buildSession } from '../helpers/session-builder.js';

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

  test('in pieces, the same text byte for byte: long arrays and objects of many keys included, keys JSON leaves out left out', () => {
    const whole = (value: unknown) => {
      expect([...embedJsonParts(value)].join('')).toBe(embedJson(value));
    };
    const many = Object.fromEntries(Array.from({ length: 4500 }, (_, i) => [i % 7 === 0 ? `${i}` : `k${i}</script>`, i % 3 === 0 ? undefined : [i, 'a&b']]));
    whole({ tasks: Array.from({ length: 4001 }, (_, i) => [`T${i}`, i, i % 2 === 0 ? null : '<b>']), details: many, none: undefined, f: () => 1 });
    whole([undefined, () => 1, { a: undefined }, [], {}, new Date(0), Array.from({ length: 2001 }, () => undefined)]);
    whole(Object.assign(Object.create(null) as object, { ['__proto__']: 1, b: [1, '\u2028'] }));
    fc.assert(fc.property(fc.jsonValue(), (value) => whole(value)), { numRuns: 300 });
    // Each long array in pieces: none holds more than a slice of its items.
    const parts = [...embedJsonParts({ tasks: Array.from({ length: 10_000 }, (_, i) => `T${i}`) })];
    expect(Math.max(...parts.map((part) => part.length))).toBeLessThan(2001 * 10);
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

describe('buildReportData', () => {
  test('the columns of tasks.csv in file order, empty ones left out, with the cells of those a task array does not hold', () => {
    const dir = buildSession('id,owner,description,role,notes,gc_signal,status\nA,ana,d,r,,,completed\nB,,d,r,,x,\n');
    const data = buildReportData(dir, readTasksFile(join(dir, 'tasks.csv')));
    expect(data.columns).toEqual([{ name: 'id' }, { name: 'owner', cells: ['ana', ''] }, { name: 'description' }, { name: 'role' }, { name: 'gc_signal', cells: ['', 'x'] }, { name: 'status' }]);
  });

  test('the cost is priced as status prices it, and what failed tasks spent is said apart', () => {
    const line = (task: string, extra: Record<string, unknown>) =>
      JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', task, attempt: 1, request: 1, kind: 'first', model: 'm', prompt_tokens: 8000, completion_tokens: 948, cached_tokens: 0, reported: true, ...extra });
    const dir = buildSession(
      [
        { id: 'A', description: 'd', role: 'r', status: 'failed' },
        { id: 'B', description: 'd', role: 'r', status: 'completed' },
      ],
      { files: { 'usage.ndjson': `${line('A', {})}\n${line('B', { cost_usd: 2 })}\n` } },
    );
    const table = readTasksFile(join(dir, 'tasks.csv'));
    const unpriced = buildReportData(dir, table);
    expect([unpriced.cost, unpriced.failedSpend]).toEqual(['$2.00 (2 request(s); 1 of them without a price, not counted)', '8,948 tokens on tasks that failed (cost unknown)']);
    expect(unpriced.details['A']?.usage?.cost_text).toBe('unknown');
    const priced = buildReportData(dir, table, { pricing: { m: { input: 1, output: 2 } } });
    expect([priced.cost, priced.failedSpend]).toEqual(['$2.01 (2 request(s))', '8,948 tokens on tasks that failed ($0.0099)']);
    expect(priced.details['A']?.usage?.cost_text).toBe('$0.0099');
  });
});
