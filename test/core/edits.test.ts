import { describe, expect, it } from 'vitest';
import type { Effect } from '../../src/core/effects.js';
import type { SchedulingCore } from '../../src/core/scheduling-core.js';
import type { SessionEdit } from '../../src/core/session-changes.js';
import { simulate, task, type SimulateOptions } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

function edit(changes: Partial<SessionEdit>): SessionEdit {
  return { add: [], update: [], remove: [], ...changes };
}

/** Feeds `change` to the core once, when `when` first holds for an effect (checked first, as the driver does); `problem` is what the check said. */
function feedOnce(when: (effect: Effect, core: SchedulingCore) => boolean, change: SessionEdit): NonNullable<SimulateOptions['onEffect']> & { problem: string | undefined } {
  let fed = false;
  const onEffect = Object.assign(
    (effect: Effect, core: SchedulingCore) => {
      if (fed || !when(effect, core)) return undefined;
      fed = true;
      onEffect.problem = core.checkEdit(change);
      return onEffect.problem === undefined ? core.edit(change) : undefined;
    },
    { problem: undefined as string | undefined },
  );
  return onEffect;
}

describe('an edit of tasks.csv during a run, through the core', () => {
  it.each(kSchedules)('%s: a task added and a pending task changed run with the new cells; a removed task never starts', (schedule) => {
    const rows = [task('A'), task('B', 'A'), task('C', 'A'), task('D', 'A')];
    const change = edit({ add: [task('N', 'A')], update: [{ id: 'B', cells: { description: 'new words' } }], remove: ['D'] });
    const sim = simulate(rows, undefined, { schedule, concurrency: 1, onEffect: feedOnce((effect) => effect.type === 'dispatch' && effect.row.id === 'A', change) });
    expect(sim.log).toContain('changed +N ~B -D waves=2');
    expect(sim.starts).toEqual(['A#1', 'B#1', 'C#1', 'N#1']);
    expect(sim.rows.map((row) => `${row.id} w${row.wave} ${row.status} ${row.description}`)).toEqual([
      'A w1 completed A',
      'B w2 completed new words',
      'C w2 completed C',
      'N w2 completed N',
    ]);
    expect(sim.outcome).toEqual({ stopped: undefined, reason: '' });
  });

  it('waves: a task added while wave 1 runs goes to wave 2 at the earliest, with what waits on it after it', () => {
    const rows = [task('A'), task('B'), task('C', 'A')];
    const change = edit({ add: [task('N')], update: [{ id: 'C', deps: 'N' }] });
    const sim = simulate(rows, undefined, { concurrency: 1, onEffect: feedOnce((effect) => effect.type === 'dispatch' && effect.row.id === 'A', change) });
    expect(sim.rows.map((row) => `${row.id} w${row.wave}`)).toEqual(['A w1', 'B w1', 'C w3', 'N w2']);
    expect(sim.starts).toEqual(['A#1', 'B#1', 'N#1', 'C#1']);
    expect(sim.log.filter((line) => line.startsWith('wave-'))).toEqual([
      'wave-start 1 (2)',
      'wave-file 1',
      'wave-done 1 2/0/0',
      'wave-start 2 (1)',
      'wave-file 2',
      'wave-done 2 1/0/0',
      'wave-start 3 (1)',
      'wave-file 3',
      'wave-done 3 1/0/0',
    ]);
  });

  it('waves: a task of the running wave keeps its inputs even before it starts; one of a later wave is open', () => {
    const rows = [task('A'), task('B'), task('C', 'A')];
    let seen: Record<string, string | undefined> = {};
    const sim = simulate(rows, undefined, {
      concurrency: 1,
      onEffect: (effect, core) => {
        if (effect.type === 'dispatch' && effect.row.id === 'A') {
          seen = Object.fromEntries(['A', 'B', 'C', 'Z'].map((id) => [id, core.standing(id)]));
          expect(core.checkEdit(edit({ update: [{ id: 'B', cells: { description: 'late' } }] }))).toBe('task B is running, or is not in the session');
          expect(core.checkEdit(edit({ remove: ['B'] }))).toBe('task B is running, or is not in the session');
          expect(core.checkEdit(edit({ update: [{ id: 'C', cells: { description: 'early enough' } }] }))).toBeUndefined();
        }
        return undefined;
      },
    });
    expect(seen).toEqual({ A: 'running', B: 'wave-running', C: 'open', Z: undefined });
    expect(sim.core.standing('A')).toBe('finished');
  });

  it('eager: every task that did not start is open', () => {
    let seen: (string | undefined)[] = [];
    simulate([task('A'), task('B'), task('C', 'A')], undefined, {
      schedule: 'eager',
      concurrency: 1,
      onEffect: (effect, core) => {
        if (effect.type === 'dispatch' && effect.row.id === 'A') seen = ['A', 'B', 'C'].map((id) => core.standing(id));
        return undefined;
      },
    });
    expect(seen).toEqual(['running', 'open', 'open']);
  });

  it('a task outside the run (finished before it) may get new input cells; its output cells and id never', () => {
    const rows = [task('A', '', { status: 'completed' }), task('B', 'A')];
    const check = (change: SessionEdit, core: SchedulingCore) => core.checkEdit(change);
    const problems: (string | undefined)[] = [];
    simulate(rows, undefined, {
      runIds: ['B'],
      onEffect: (effect, core) => {
        if (effect.type !== 'dispatch') return undefined;
        expect(core.standing('A')).toBe('earlier');
        problems.push(
          check(edit({ update: [{ id: 'A', cells: { description: 'a note' } }] }), core),
          check(edit({ update: [{ id: 'A', cells: { findings: 'mine' } }] }), core),
          check(edit({ remove: ['A'] }), core),
          check(edit({ remove: ['B'] }), core),
        );
        return undefined;
      },
    });
    expect(problems).toEqual([
      undefined,
      'the findings cell of A is the run\'s',
      'task A is running, or is not in the session',
      'task B is running, or is not in the session',
    ]);
  });

  it.each<[string, Partial<SessionEdit>, string]>([
    ['a removed task another waits on', { remove: ['C'] }, 'task D depends on unknown task C'],
    ['a cycle', { update: [{ id: 'C', deps: 'D' }] }, 'it would make a cycle of C;D'],
    ['an id taken', { add: [task('C')] }, 'task C exists already'],
  ])('an edit with %s is refused whole: nothing changes', (_name, changes, problem) => {
    const rows = [task('A'), task('C', 'A'), task('D', 'C')];
    const feed = feedOnce((effect) => effect.type === 'dispatch' && effect.row.id === 'A', edit(changes));
    const sim = simulate(rows, undefined, { onEffect: feed });
    expect(feed.problem).toBe(problem);
    expect(sim.starts).toEqual(['A#1', 'C#1', 'D#1']);
    expect(sim.log.some((line) => line.startsWith('changed'))).toBe(false);
  });

  it.each(kSchedules)('%s: an edit fed at the last edit point, as the run would end, runs what it adds before the run ends', (schedule) => {
    const rows = [task('A'), task('B', 'A')];
    const feed = feedOnce((effect, core) => effect.type === 'edit-point' && core.standing('B') === 'finished', edit({ add: [task('N', 'B')] }));
    const sim = simulate(rows, undefined, { schedule, onEffect: feed });
    expect(sim.starts).toEqual(['A#1', 'B#1', 'N#1']);
    expect(sim.rows.map((row) => `${row.id} w${row.wave} ${row.status}`)).toEqual(['A w1 completed', 'B w2 completed', 'N w3 completed']);
    expect(sim.log.at(-1)).toBe('run-done complete');
  });

  it('waves: an edit fed at the gate, once a wave is done, applies to the wave about to open', () => {
    const rows = [task('A'), task('B', 'A')];
    const feed = feedOnce((effect, core) => effect.type === 'edit-point' && core.standing('A') === 'finished', edit({ update: [{ id: 'B', cells: { description: 'just in time' } }] }));
    const sim = simulate(rows, undefined, { onEffect: feed });
    expect(feed.problem).toBeUndefined();
    expect(sim.rows[1]!.description).toBe('just in time');
    expect(sim.log.indexOf('changed + ~B waves=2')).toBeLessThan(sim.log.indexOf('wave-start 2 (1)'));
  });

  it('an exec_mode changed by an edit moves a queued task to the other queue', () => {
    const rows = [task('A'), task('B'), task('C')];
    const feed = feedOnce((effect) => effect.type === 'dispatch' && effect.row.id === 'A', edit({ update: [{ id: 'C', cells: { exec_mode: 'interactive' } }] }));
    const sim = simulate(rows, undefined, { schedule: 'eager', concurrency: 1, onEffect: feed });
    expect(sim.log.filter((line) => line.startsWith('start'))).toEqual(['start A#1', 'start C#1', 'start B#1']);
  });
});
