import { describe, expect, it } from 'vitest';
import type { TaskChanges } from '../../src/core/session-changes.js';
import { describeStall } from '../../src/core/state/stall.js';
import { fail, ok, simulate, task, type Script } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

/** G, an interactive decision, then S after it; G answers with `changes`. */
function decision(changes: Partial<TaskChanges>, reply = ok()) {
  const rows = [task('G', '', { exec_mode: 'interactive' }), task('S', 'G')];
  const script: Script = (id) => (id === 'G' ? { reply, changes: { add: [], update: [], skip: [], ...changes } } : undefined);
  return { rows, script };
}

describe('dynamic tasks: an interactive task adds, rewires and skips', () => {
  it.each(kSchedules)('%s: a task added after G and S rewired onto it: N runs before S, waves recomputed', (schedule) => {
    const { rows, script } = decision({ add: [task('N', 'G')], update: [{ id: 'S', deps: 'N' }] });
    const sim = simulate(rows, script, { schedule });
    expect(sim.log).toContain('changed +N ~S waves=3');
    expect(sim.starts).toEqual(['G#1', 'N#1', 'S#1']);
    expect(sim.rows.map((row) => `${row.id} w${row.wave} ${row.status}`)).toEqual(['G w1 completed', 'S w3 completed', 'N w2 completed']);
    expect(sim.log.filter((line) => line.startsWith('wave-done'))).toEqual(['wave-done 1 1/0/0', 'wave-done 2 1/0/0', 'wave-done 3 1/0/0']);
  });

  it('added tasks keep file order among themselves', () => {
    const { rows, script } = decision({ add: [task('N1', 'G', { priority: 'P1' }), task('N2', 'G'), task('N3', 'G')] });
    expect(simulate(rows, script, { concurrency: 1 }).starts).toEqual(['G#1', 'S#1', 'N1#1', 'N2#1', 'N3#1']);
  });

  it('a context source added by a change is waited for', () => {
    const { rows, script } = decision({ add: [task('N', 'G')], update: [{ id: 'S', context_from: 'N' }] });
    const sim = simulate(rows, script, { schedule: 'eager' });
    expect(sim.log.indexOf('start S#1')).toBeGreaterThan(sim.log.indexOf('done N completed'));
  });

  it('the changes of a task that failed are not applied', () => {
    const { rows, script } = decision({ add: [task('N', 'G')] }, fail());
    const sim = simulate(rows, script);
    expect(sim.rows.map((row) => row.id)).toEqual(['G', 'S']);
    expect(sim.log.some((line) => line.startsWith('changed'))).toBe(false);
  });

  it.each<[string, Partial<TaskChanges>, string]>([
    ['a cycle', { add: [task('N', 'S')], update: [{ id: 'S', deps: 'G;N' }] }, 'it would make a cycle of N;S'],
    ['an unknown dependency', { add: [task('N', 'Q')] }, 'task N depends on unknown task Q'],
    ['an id taken', { add: [task('S')] }, 'task S exists already'],
    ['an id twice', { add: [task('N'), task('N')] }, 'task N exists already'],
    ['a malformed id', { add: [task('no space')] }, 'invalid task id no space'],
    ['a task that started (the deciding one)', { update: [{ id: 'G', deps: '' }] }, 'task G is not a pending task of this run'],
    ['a task outside the run', { skip: [{ id: 'X', error: 'by hand' }] }, 'task X is not a pending task of this run'],
  ])('a change with %s is refused: the deciding task fails, nothing changes', (_name, changes, problem) => {
    const { rows, script } = decision(changes);
    const sim = simulate(rows, script);
    expect(sim.rows.map((row) => `${row.id} ${row.status} ${row.error}`)).toEqual([
      `G failed Invalid session change: ${problem}`,
      'S skipped Dependency failed or skipped: G (failed)',
    ]);
  });

  it('a task that finished earlier in the run cannot be changed', () => {
    const rows = [task('A'), task('G', 'A', { exec_mode: 'interactive' })];
    const script: Script = (id) => (id === 'G' ? { reply: ok(), changes: { add: [], update: [], skip: [{ id: 'A', error: 'x' }] } } : undefined);
    expect(simulate(rows, script).rows[1]!.error).toBe('Invalid session change: task A is not a pending task of this run');
  });
});

describe('stall: nothing can start, yet tasks are left', () => {
  it.each(kSchedules)('%s: a rewiring that makes two tasks wait on each other', (schedule) => {
    const rows = [task('G', '', { exec_mode: 'interactive' }), task('A', 'G'), task('B', 'A')];
    const script: Script = (id) => (id === 'G' ? { reply: ok(), changes: { add: [], update: [{ id: 'A', context_from: 'B' }], skip: [] } } : undefined);
    const sim = simulate(rows, script, { schedule });
    expect(sim.outcome).toEqual({
      stopped: 'stall',
      reason: 'Stalled: nothing can start, yet 2 task(s) are not finished:\n  A waits on B\n  B waits on A',
    });
    expect(sim.rows.map((row) => row.status)).toEqual(['completed', 'pending', 'pending']);
  });

  it('names at most 20 tasks, and what it cannot name', () => {
    const rows = Array.from({ length: 23 }, (_, k) => task(`t${k}`, k === 0 ? '' : `t${k - 1}`));
    const byId = new Map(rows.map((row) => [row.id, row]));
    const text = describeStall(rows, byId);
    expect(text.split('\n')).toHaveLength(1 + 20 + 1);
    expect(text).toContain('  t0 waits on (nothing it can name)\n  t1 waits on t0\n');
    expect(text.endsWith('\n  … and 3 more')).toBe(true);
  });

  it('a finished run is no stall', () => {
    expect(simulate([task('A'), task('B', 'A')]).outcome).toEqual({ stopped: undefined, reason: '' });
  });
});
