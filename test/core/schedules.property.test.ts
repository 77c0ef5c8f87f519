import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dagArb } from '../graph/random-graphs.js';
import { err, fail, finalRecords, ok, simulate, task, type Script } from './simulate.js';

/** How each task's attempts go: done, failed, or a retryable error (or a worker crash) first, then done. */
const kOutcomes = ['completed', 'failed', 'transient-then-ok', 'crash-then-ok', 'blocks'] as const;
type Outcome = (typeof kOutcomes)[number];

function scriptOf(outcomes: ReadonlyMap<string, Outcome>): Script {
  return (id, attempt) => {
    switch (outcomes.get(id)) {
      case 'failed':
        return fail(`${id} failed`);
      case 'transient-then-ok':
        return attempt === 1 ? err('transient') : ok(id);
      case 'crash-then-ok':
        return attempt === 1 ? err('worker-crash') : ok(id);
      case 'blocks':
        return { ...ok(`${id} says no`), supervision_verdict: 'block' };
      default:
        return ok(id);
    }
  };
}

/** Which running attempt answers next: a random walk through the ones out. */
const pickerOf = (choices: number[]) => {
  let turn = 0;
  return (running: readonly string[]) => (choices[turn++ % choices.length] ?? 0) % running.length;
};

describe('waves and eager end with the same records', () => {
  it('for random DAGs, outcomes, priorities, concurrency and answer orders', () => {
    fc.assert(
      fc.property(
        dagArb(20).chain((graph) =>
          fc.record({
            graph: fc.constant(graph),
            outcomes: fc.array(fc.constantFrom(...kOutcomes), { minLength: graph.tasks.length, maxLength: graph.tasks.length }),
            priorities: fc.array(fc.constantFrom('', 'P0', 'P1', 'P2'), { minLength: graph.tasks.length, maxLength: graph.tasks.length }),
            concurrency: fc.integer({ min: 1, max: 4 }),
            wavesOrder: fc.array(fc.nat(7), { minLength: 1, maxLength: 30 }),
            eagerOrder: fc.array(fc.nat(7), { minLength: 1, maxLength: 30 }),
          }),
        ),
        ({ graph, outcomes, priorities, concurrency, wavesOrder, eagerOrder }) => {
          const outcomeOf = new Map(graph.tasks.map((t, k) => [t.id, outcomes[k]!]));
          const rows = () => graph.tasks.map((t, k) => task(t.id, t.deps.join(';'), { priority: priorities[k]! }));
          const options = { concurrency, retries: 1 };
          const waves = simulate(rows(), scriptOf(outcomeOf), { ...options, schedule: 'waves', pick: pickerOf(wavesOrder) });
          const eager = simulate(rows(), scriptOf(outcomeOf), { ...options, schedule: 'eager', pick: pickerOf(eagerOrder) });
          expect(waves.outcome).toEqual({ stopped: undefined, reason: '' });
          expect(eager.outcome).toEqual({ stopped: undefined, reason: '' });
          expect(finalRecords(eager.rows)).toEqual(finalRecords(waves.rows));
          // Both write the same wave files, and report every wave once, in order.
          const lines = (log: string[], kind: string) => log.filter((line) => line.startsWith(kind)).sort();
          expect(lines(eager.log, 'wave-file')).toEqual(lines(waves.log, 'wave-file'));
          const done = (log: string[]) => log.filter((line) => line.startsWith('wave-done'));
          expect(done(eager.log)).toEqual(done(waves.log));
        },
      ),
      { numRuns: 300 },
    );
  });
});
