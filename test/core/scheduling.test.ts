import { describe, expect, it } from 'vitest';
import type { HaltPolicy } from '../../src/core/core-options.js';
import { fail, ok, simulate, task, type Script } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

describe('readiness: waves wait for the whole earlier wave, eager only for a task’s own dependencies', () => {
  // A and C in wave 1, B after A; A answers first, C last (newest attempt answers first when C is slow).
  const rows = () => [task('A'), task('C'), task('B', 'A')];
  const cOnlyLast = (running: readonly string[]) => Math.max(0, running.indexOf('A'), running.indexOf('B'));

  it.each([
    ['waves', ['A#1', 'C#1', 'B#1']],
    ['eager', ['A#1', 'C#1', 'B#1']],
  ] as const)('%s: start order', (schedule, starts) => {
    expect(simulate(rows(), undefined, { schedule, pick: cOnlyLast }).starts).toEqual(starts);
  });

  it.each([
    ['waves', ['start A#1', 'start C#1', 'done A completed', 'done C completed', 'start B#1']],
    ['eager', ['start A#1', 'start C#1', 'done A completed', 'start B#1', 'done B completed', 'done C completed']],
  ] as const)('%s: B starts %s', (schedule, order) => {
    const { log } = simulate(rows(), undefined, { schedule, pick: cOnlyLast });
    const relevant = log.filter((line) => /^(start|done) /.test(line));
    expect(relevant.slice(0, order.length)).toEqual(order);
  });

  it.each(kSchedules)('%s: a context source is waited for like a dependency', (schedule) => {
    const rows = [task('A'), task('B', '', { context_from: 'A' })];
    const { log } = simulate(rows, undefined, { schedule, concurrency: 1 });
    expect(log.indexOf('start B#1')).toBeGreaterThan(log.indexOf('done A completed'));
  });

  it.each(kSchedules)('%s: a dependency outside the run that completed satisfies; one pending skips', (schedule) => {
    const rows = [task('A', '', { status: 'completed' }), task('P'), task('B', 'A'), task('C', 'P')];
    const { rows: after } = simulate(rows, undefined, { schedule, runIds: ['B', 'C'] });
    expect(after.map((row) => `${row.id} ${row.status} ${row.error}`)).toEqual([
      'A completed ',
      'P pending ',
      'B completed ',
      'C skipped Dependency failed or skipped: P (pending)',
    ]);
  });
});

describe('priority: P0 before P1 (or blank) before P2, then file order', () => {
  it.each(kSchedules)('%s, one slot', (schedule) => {
    const rows = [task('a', '', { priority: 'P2' }), task('b'), task('c', '', { priority: 'P0' }), task('d', '', { priority: 'P1' }), task('e', '', { priority: 'P0' })];
    expect(simulate(rows, undefined, { schedule, concurrency: 1 }).starts).toEqual(['c#1', 'e#1', 'b#1', 'd#1', 'a#1']);
  });

  it('waves: a P0 task of wave 2 starts after every task of wave 1, however low', () => {
    const rows = [task('a', '', { priority: 'P2' }), task('b'), task('c', 'b', { priority: 'P0' })];
    expect(simulate(rows, undefined, { concurrency: 1 }).starts).toEqual(['b#1', 'a#1', 'c#1']);
  });

  it('eager: a P0 task that became ready goes before P2 tasks that wait', () => {
    const rows = [task('a', '', { priority: 'P2' }), task('b'), task('c', 'b', { priority: 'P0' })];
    expect(simulate(rows, undefined, { schedule: 'eager', concurrency: 1 }).starts).toEqual(['b#1', 'c#1', 'a#1']);
  });

  it('interactive tasks run in their own lane, one at a time, outside the concurrency limit', () => {
    const rows = [task('i1', '', { exec_mode: 'interactive' }), task('i2', '', { exec_mode: 'interactive' }), task('a'), task('b')];
    const { log } = simulate(rows, undefined, { concurrency: 1 });
    expect(log.slice(1, 4)).toEqual(['wave-file 1', 'start i1#1', 'start a#1']);
  });
});

describe('halt: no new task once N or N% of the run’s tasks failed for a non-transient reason', () => {
  const rows = () => ['a', 'b', 'c', 'd'].map((id) => task(id));
  const allFail: Script = () => fail();
  it.each<[string, HaltPolicy, number, string]>([
    ['count 1', { count: 1 }, 1, 'Halted: 1 task(s) failed (limit 1); no new tasks were started'],
    ['count 2', { count: 2 }, 2, 'Halted: 2 task(s) failed (limit 2); no new tasks were started'],
    ['50% of 4', { percent: 50 }, 2, 'Halted: 2 task(s) failed (limit 50%); no new tasks were started'],
    ['30% of 4 rounds up to 2', { percent: 30 }, 2, 'Halted: 2 task(s) failed (limit 30%); no new tasks were started'],
    ['100%', { percent: 100 }, 4, 'Halted: 4 task(s) failed (limit 100%); no new tasks were started'],
  ])('%s', (_name, halt, started, reason) => {
    const sim = simulate(rows(), allFail, { halt, concurrency: 1 });
    expect(sim.starts).toHaveLength(started);
    expect(sim.outcome).toEqual({ stopped: 'halt', reason });
    expect(sim.rows.filter((row) => row.status === 'pending')).toHaveLength(4 - started);
  });

  it('a retryable failure that ran out of retries does not count', () => {
    const sim = simulate(rows(), (id) => (id === 'a' ? { kind: 'error', errorClass: 'transient', error: 'x' } : undefined), { halt: { count: 1 }, concurrency: 1 });
    expect(sim.outcome?.stopped).toBeUndefined();
    expect(sim.rows.map((row) => row.status)).toEqual(['failed', 'completed', 'completed', 'completed']);
  });

  it('a task that recovers on retry does not count', () => {
    const script: Script = (id, attempt) => (id === 'a' && attempt === 1 ? { kind: 'error', errorClass: 'transient', error: 'x' } : undefined);
    const sim = simulate(rows(), script, { halt: { count: 1 }, retries: 1, concurrency: 1 });
    expect(sim.outcome?.stopped).toBeUndefined();
    expect(sim.rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });

  it('interactive tasks not started yet are held back too', () => {
    const lane = ['i1', 'i2', 'i3'].map((id) => task(id, '', { exec_mode: 'interactive' }));
    const sim = simulate(lane, (id) => (id === 'i1' ? fail() : undefined), { halt: { count: 1 } });
    expect(sim.starts).toEqual(['i1#1']);
    expect(sim.rows.map((row) => row.status)).toEqual(['failed', 'pending', 'pending']);
  });

  it('tasks skipped because of the failure do not count either', () => {
    const rows = [task('a'), task('b', 'a'), task('c', 'b'), task('d')];
    const sim = simulate(rows, (id) => (id === 'a' ? fail() : ok()), { halt: { count: 2 }, concurrency: 1 });
    expect(sim.outcome?.stopped).toBeUndefined();
  });
});

describe('the skip cascade names its cause', () => {
  it.each(kSchedules)('%s: a failure skips its dependents transitively, naming the root', (schedule) => {
    const rows = [task('A'), task('B', 'A'), task('C', 'B'), task('D', 'A;X'), task('X')];
    const sim = simulate(rows, (id) => (id === 'A' ? fail() : undefined), { schedule });
    expect(sim.rows.map((row) => `${row.id} ${row.status} ${row.error}`)).toEqual([
      'A failed boom',
      'B skipped Dependency failed or skipped: A (failed)',
      'C skipped Dependency failed or skipped: A (failed)',
      'D skipped Dependency failed or skipped: A (failed)',
      'X completed ',
    ]);
    expect(sim.starts).not.toContain('B#1');
  });

  it.each(kSchedules)('%s: a checkpoint that says block skips everything downstream with its findings', (schedule) => {
    const rows = [task('S'), task('B', 'S'), task('C', 'B')];
    const block = { ...ok('  not safe\n to go on '), supervision_verdict: 'block' };
    const sim = simulate(rows, (id) => (id === 'S' ? block : undefined), { schedule });
    expect(sim.rows.map((row) => `${row.id} ${row.status} ${row.error}`)).toEqual([
      'S completed ',
      'B skipped Blocked by checkpoint S: not safe to go on',
      'C skipped Blocked by checkpoint S: not safe to go on',
    ]);
  });

  it.each(kSchedules)('%s: a task skipped as converged satisfies its dependents; a superseded one does not', (schedule) => {
    const rows = [
      task('G', '', { exec_mode: 'interactive' }),
      task('R', 'G'),
      task('S', 'R'),
      task('F', 'G'),
      task('T', 'F'),
    ];
    const decide: Script = (id) =>
      id === 'G'
        ? {
            reply: ok(),
            changes: {
              add: [],
              update: [],
              skip: [
                { id: 'R', error: 'Skipped: GC converged (G)' },
                { id: 'F', error: 'Skipped: superseded by a new decision of G' },
              ],
            },
          }
        : undefined;
    const sim = simulate(rows, decide, { schedule });
    expect(sim.rows.map((row) => `${row.id} ${row.status} ${row.error}`)).toEqual([
      'G completed ',
      'R skipped Skipped: GC converged (G)',
      'S completed ',
      'F skipped Skipped: superseded by a new decision of G',
      'T skipped Dependency failed or skipped: F (skipped)',
    ]);
  });
});

describe('of several failed dependencies, the first one named gives the error, whichever finished first', () => {
  const rows = () => [task('A'), task('B'), task('S'), task('C', 'B;A;S')];
  const block = { ...ok('no'), supervision_verdict: 'block' };
  const script: Script = (id) => (id === 'A' ? fail() : id === 'S' ? block : id === 'B' ? fail() : undefined);
  it.each([
    ['waves, A answers first', 'waves', 0],
    ['waves, B answers first', 'waves', 1],
    ['eager, A answers first', 'eager', 0],
    ['eager, B answers last', 'eager', 2],
  ] as const)('%s', (_name, schedule, first) => {
    const sim = simulate(rows(), script, { schedule, concurrency: 3, pick: (running) => (running.length === 3 ? first : 0) });
    expect(sim.rows[3]!.error).toBe('Dependency failed or skipped: B (failed)');
  });

  it('a blocking checkpoint named first wins over a failure', () => {
    const sim = simulate([task('A'), task('S'), task('C', 'S;A')], script, { concurrency: 2 });
    expect(sim.rows[2]!.error).toBe('Blocked by checkpoint S: no');
  });
});

describe('wave lines and wave files', () => {
  const rows = () => [task('A'), task('B'), task('C', 'A'), task('D', 'C'), task('E', 'B')];
  it.each([
    [
      'waves',
      ['wave-start 1 (2)', 'wave-file 1', 'wave-done 1 1/1/0', 'wave-start 2 (2)', 'wave-file 2', 'wave-done 2 1/0/1', 'wave-start 3 (1)', 'wave-file 3', 'wave-done 3 1/0/0'],
    ],
    ['eager', ['wave-file 1', 'wave-done 1 1/1/0', 'wave-file 2', 'wave-done 2 1/0/1', 'wave-file 3', 'wave-done 3 1/0/0']],
  ] as const)('%s: in wave order; a failure’s skips counted in their wave', (schedule, lines) => {
    const sim = simulate(rows(), (id) => (id === 'B' ? fail() : undefined), { schedule, concurrency: 1 });
    expect(sim.log.filter((line) => line.startsWith('wave'))).toEqual(lines);
  });

  it.each([
    ['waves', ['wave-start 1 (1)', 'wave-file 1', 'wave-done 1 0/1/0', 'wave-start 2 (1)', 'wave-done 2 0/0/1', 'wave-start 3 (1)', 'wave-done 3 0/0/1']],
    ['eager', ['wave-file 1', 'wave-done 1 0/1/0', 'wave-done 2 0/0/1', 'wave-done 3 0/0/1']],
  ] as const)('%s: waves whose every task was skipped get no wave file', (schedule, lines) => {
    const sim = simulate([task('A'), task('B', 'A'), task('C', 'B')], () => fail(), { schedule });
    expect(sim.log.filter((line) => line.startsWith('wave'))).toEqual(lines);
  });

  it('eager: a later wave that finished early is reported after the waves before it', () => {
    // A (wave 1) answers last; B (wave 1) and C (wave 2, after B) finish first.
    const rows = [task('A'), task('B'), task('C', 'B')];
    const lastA = (running: readonly string[]) => (running.length > 1 && running[0] === 'A' ? 1 : 0);
    const sim = simulate(rows, undefined, { schedule: 'eager', pick: lastA });
    expect(sim.log.filter((line) => /^(done|wave-done)/.test(line))).toEqual([
      'done B completed',
      'done C completed',
      'done A completed',
      'wave-done 1 2/0/0',
      'wave-done 2 1/0/0',
    ]);
  });
});
