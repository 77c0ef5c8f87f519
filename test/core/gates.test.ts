import { describe, expect, it } from 'vitest';
import type { GateChange } from '../../src/core/gates.js';
import { gateOf } from '../../src/core/gates.js';
import { rejectedCause } from '../../src/core/skip-cause.js';
import type { TaskChanges } from '../../src/core/session-changes.js';
import { fail, finalRecords, ok, simulate, task, type Answer } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

const validates = (row: { role: string }) => row.role === 'reviewer';
const changes = (gates: GateChange[], more: Partial<TaskChanges> = {}): TaskChanges => ({ add: [], update: [], skip: [], gates, ...more });
const answer = (gates: GateChange[], more: Partial<TaskChanges> = {}): Answer => ({ reply: ok(), changes: changes(gates, more) });

/** X makes artifacts; D (no validator) and V (a reviewer) depend on it; E after D. */
function shape() {
  return [task('X'), task('D', 'X'), task('V', 'X', { role: 'reviewer' }), task('E', 'D')];
}

describe('validation gating: the artifacts of a task hold back its dependents', () => {
  it.each(kSchedules)('%s: pending holds D until V validates; V starts all the same', (schedule) => {
    const sim = simulate(
      shape(),
      (id) => (id === 'X' ? answer([{ id: 'X', gate: 'pending' }]) : id === 'V' ? answer([{ id: 'X', gate: 'passed' }]) : undefined),
      { schedule, validates },
    );
    expect(sim.starts).toEqual(['X#1', 'V#1', 'D#1', 'E#1']);
    expect(sim.outcome?.stopped).toBeUndefined();
  });

  it.each(kSchedules)('%s: passed holds nothing', (schedule) => {
    const sim = simulate(shape(), (id) => (id === 'X' ? answer([{ id: 'X', gate: 'passed' }]) : undefined), { schedule, validates, concurrency: 1 });
    expect(sim.starts).toEqual(['X#1', 'D#1', 'V#1', 'E#1']);
  });

  it.each(kSchedules)('%s: failed with no fix round left: the validator skips D as rejected, and E after it', (schedule) => {
    const cause = rejectedCause('prd', 'X', 'no acceptance criteria');
    const sim = simulate(
      shape(),
      (id) =>
        id === 'X'
          ? answer([{ id: 'X', gate: 'pending' }])
          : id === 'V'
            ? answer([{ id: 'X', gate: 'failed' }], { skip: [{ id: 'D', error: cause.error }] })
            : undefined,
      { schedule, validates },
    );
    expect(finalRecords(sim.rows)).toEqual({
      X: 'completed',
      D: 'skipped: Blocked by artifact prd of X: no acceptance criteria',
      V: 'completed',
      E: 'skipped: Blocked by artifact prd of X: no acceptance criteria',
    });
  });

  it.each(kSchedules)('%s: pending and no validator: a stall that says only a validation can end it', (schedule) => {
    const rows = [task('X'), task('D', 'X'), task('E', 'D')];
    const sim = simulate(rows, (id) => (id === 'X' ? answer([{ id: 'X', gate: 'pending' }]) : undefined), { schedule, validates });
    expect(sim.outcome?.stopped).toBe('stall');
    expect(sim.outcome?.reason).toBe(
      'Stalled: nothing can start, yet 2 task(s) are not finished:\n' +
        '  D waits on a validation of the artifacts of X (pending)\n' +
        '  E waits on D\n' +
        'Only a validation can end this: no task left validates those artifacts. A task of a validator role that depends on ' +
        'their task gives artifact_validations (or the quality gate resumes); until then the tasks after them wait.',
    );
  });

  it('gates of tasks finished before the run hold their dependents in it (a resume)', () => {
    const rows = shape();
    Object.assign(rows[0]!, { status: 'completed' });
    const sim = simulate(rows, (id) => (id === 'V' ? answer([{ id: 'X', gate: 'passed' }]) : undefined), {
      validates,
      runIds: ['D', 'V', 'E'],
      gates: new Map([['X', 'pending']]),
    });
    expect(sim.starts).toEqual(['V#1', 'D#1', 'E#1']);
  });

  it('a task held at a gate and doomed by another dependency is skipped for that, not left waiting', () => {
    const rows = [task('X'), task('Y'), task('D', 'X;Y'), task('V', 'X', { role: 'reviewer' })];
    const sim = simulate(
      rows,
      (id) => (id === 'X' ? answer([{ id: 'X', gate: 'pending' }]) : id === 'Y' ? fail('y broke') : id === 'V' ? answer([{ id: 'X', gate: 'pending' }]) : undefined),
      { validates, concurrency: 1 },
    );
    expect(sim.rows[2]!.error).toBe('Dependency failed or skipped: Y (failed)');
    expect(sim.outcome?.stopped).toBeUndefined();
  });

  it('the gates of a failed reply are not applied', () => {
    const sim = simulate(shape(), (id) => (id === 'X' ? { reply: fail(), changes: changes([{ id: 'X', gate: 'pending' }]) } : undefined), { validates });
    expect(sim.rows[1]!.error).toBe('Dependency failed or skipped: X (failed)');
  });

  it('gateOf: failed over pending over passed, passed for none', () => {
    expect(gateOf([])).toBe('passed');
    expect(gateOf(['passed', 'pending'])).toBe('pending');
    expect(gateOf(['pending', 'failed', 'passed'])).toBe('failed');
  });
});
