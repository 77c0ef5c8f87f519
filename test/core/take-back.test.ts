import { describe, expect, it } from 'vitest';
import type { Effect } from '../../src/core/effects.js';
import type { SchedulingCore } from '../../src/core/scheduling-core.js';
import { ok, simulate, task } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

/** After the `k`-th start: stop on a signal, then take back every task the script names. */
function stopAndTakeBack(k: number, ids: readonly string[]) {
  let starts = 0;
  return (effect: Effect, core: SchedulingCore): Iterable<Effect> | undefined => {
    if (effect.type !== 'dispatch' || ++starts !== k) return undefined;
    return (function* () {
      yield* core.stop('signal', 'Interrupted');
      for (const id of ids) yield* core.takeBack(id);
    })();
  };
}

describe('take back: a running task the driver took back is pending again and no longer out', () => {
  it.each(kSchedules)('%s: the run ends once the last task out is taken back, and nothing else starts', (schedule) => {
    const rows = [task('A'), task('B'), task('C'), task('D', 'A')];
    const sim = simulate(rows, undefined, { schedule, concurrency: 2, onEffect: stopAndTakeBack(2, ['A', 'B']) });
    expect(sim.starts).toEqual(['A#1', 'B#1']);
    expect(sim.log.at(-1)).toBe('run-done signal');
    expect(sim.outcome).toEqual({ stopped: 'signal', reason: 'Interrupted' });
    expect(sim.rows.map((row) => `${row.id} ${row.status}`)).toEqual(['A pending', 'B pending', 'C pending', 'D pending']);
  });

  it('the run waits for a task still out that was not taken back, and records it', () => {
    const rows = [task('A'), task('B'), task('C')];
    // A is taken back after the second start; B is still out and answers later.
    const sim = simulate(rows, undefined, { concurrency: 2, onEffect: stopAndTakeBack(2, ['A']) });
    expect(sim.starts).toEqual(['A#1', 'B#1']);
    expect(sim.log.slice(-2)).toEqual(['done B completed', 'run-done signal']);
    expect(sim.rows.map((row) => `${row.id} ${row.status}`)).toEqual(['A pending', 'B completed', 'C pending']);
  });

  it('an interactive task taken back frees the lane: the run ends', () => {
    const rows = [task('A', '', { exec_mode: 'interactive' }), task('B', 'A')];
    const sim = simulate(rows, undefined, { onEffect: stopAndTakeBack(1, ['A']) });
    expect(sim.starts).toEqual(['A#1']);
    expect(sim.outcome?.stopped).toBe('signal');
    expect(sim.rows.map((row) => `${row.id} ${row.status}`)).toEqual(['A pending', 'B pending']);
  });

  it('a late answer of a task taken back is ignored: it stays pending, no effect', () => {
    const rows = [task('A'), task('B')];
    const sim = simulate(rows, undefined, { concurrency: 2, onEffect: stopAndTakeBack(2, ['A', 'B']) });
    expect([...sim.core.settled('A', ok())]).toEqual([]);
    expect(sim.rows[0]!.status).toBe('pending');
    expect(sim.rows[0]!.findings).toBe('');
  });

  it('taking back a task that is not out does nothing', () => {
    const rows = [task('A'), task('B', 'A')];
    const sim = simulate(rows);
    expect(sim.outcome?.stopped).toBeUndefined();
    expect([...sim.core.takeBack('A')]).toEqual([]);
    expect([...sim.core.takeBack('nope')]).toEqual([]);
    expect(sim.rows.map((row) => row.status)).toEqual(['completed', 'completed']);
  });
});
