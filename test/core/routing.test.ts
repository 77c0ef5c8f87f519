import { describe, expect, it } from 'vitest';
import type { CoreReply } from '../../src/core/effects.js';
import { parseSkipCause, satisfiesDependents, skippedForFailure } from '../../src/core/skip-cause.js';
import { fail, finalRecords, simulate, task, type Script } from './simulate.js';

const kSchedules = ['waves', 'eager'] as const;

const routed = (route: string): CoreReply => ({ kind: 'finished', status: 'completed', findings: `chose ${route}`, gc_signal: '', severity_summary: '', error: '', route });

/**
 * The lifecycle's shape: PLAN routes; ARCH is on the architecture branch, ORCH on the
 * orchestrated and architecture ones (after ARCH), IMPL on every branch (after ORCH), TEST after IMPL.
 */
function lifecycle(route: string) {
  const rows = [
    task('PLAN'),
    task('ARCH', 'PLAN', { branch: 'architecture' }),
    task('ORCH', 'PLAN;ARCH', { branch: 'orchestrated;architecture' }),
    task('IMPL', 'PLAN;ORCH', { branch: 'direct;orchestrated;architecture' }),
    task('TEST', 'IMPL'),
  ];
  const script: Script = (id) => (id === 'PLAN' ? routed(route) : undefined);
  return { rows, script };
}

describe('conditional routing: a result chooses a branch of its dependents', () => {
  it.each(kSchedules)('%s: direct skips ARCH and ORCH as not chosen, and IMPL and TEST still run', (schedule) => {
    const { rows, script } = lifecycle('direct');
    const sim = simulate(rows, script, { schedule });
    expect(finalRecords(sim.rows)).toEqual({
      PLAN: 'completed',
      ARCH: 'skipped: Skipped: not chosen (PLAN: direct)',
      ORCH: 'skipped: Skipped: not chosen (PLAN: direct)',
      IMPL: 'completed',
      TEST: 'completed',
    });
    expect(sim.starts).toEqual(['PLAN#1', 'IMPL#1', 'TEST#1']);
    expect(sim.rows[0]!.route).toBe('direct');
    expect(sim.outcome?.stopped).toBeUndefined();
  });

  it.each(kSchedules)('%s: orchestrated runs ORCH before IMPL; ARCH alone is not chosen', (schedule) => {
    const { rows, script } = lifecycle('orchestrated');
    const sim = simulate(rows, script, { schedule });
    expect(sim.starts).toEqual(['PLAN#1', 'ORCH#1', 'IMPL#1', 'TEST#1']);
    expect(sim.rows[1]!.error).toBe('Skipped: not chosen (PLAN: orchestrated)');
  });

  it.each(kSchedules)('%s: architecture runs ARCH, ORCH, IMPL in turn', (schedule) => {
    const { rows, script } = lifecycle('architecture');
    expect(simulate(rows, script, { schedule }).starts).toEqual(['PLAN#1', 'ARCH#1', 'ORCH#1', 'IMPL#1', 'TEST#1']);
  });

  it('a result that chooses no route routes nothing: every dependent runs', () => {
    const rows = [task('PLAN'), task('ARCH', 'PLAN', { branch: 'architecture' }), task('IMPL', 'PLAN;ARCH')];
    expect(simulate(rows).starts).toEqual(['PLAN#1', 'ARCH#1', 'IMPL#1']);
  });

  it('a route none of the dependents is on fails the routing task, and its dependents are skipped for it', () => {
    const { rows, script } = lifecycle('turbo');
    const sim = simulate(rows, script);
    expect(sim.rows[0]!.status).toBe('failed');
    expect(sim.rows[0]!.error).toBe('Invalid route of PLAN: "turbo" is none of the branches its dependents are on (architecture, direct, orchestrated)');
    expect(sim.rows[0]!.route).toBe('');
    expect(sim.rows.slice(1).every((row) => row.status === 'skipped')).toBe(true);
  });

  it('a route that is no branch name fails the routing task', () => {
    const rows = [task('PLAN'), task('IMPL', 'PLAN')];
    const sim = simulate(rows, () => routed('a b'));
    expect(sim.rows[0]!.error).toMatch(/^Invalid route of PLAN: "a b" is no branch name/);
  });

  it('a route with no branch among the dependents is recorded, and routes nothing', () => {
    const rows = [task('PLAN'), task('IMPL', 'PLAN')];
    const sim = simulate(rows, (id) => (id === 'PLAN' ? routed('direct') : undefined));
    expect(finalRecords(sim.rows)).toEqual({ PLAN: 'completed', IMPL: 'completed' });
    expect(sim.rows[0]!.route).toBe('direct');
  });

  it('the branches may come from the pipeline (branchOf) rather than a cell', () => {
    const rows = [task('PLAN'), task('ARCH', 'PLAN', { role: 'architect' }), task('IMPL', 'PLAN;ARCH')];
    const branchOf = (row: { role: string }) => (row.role === 'architect' ? ['architecture'] : ['direct', 'architecture']);
    const sim = simulate(rows, (id) => (id === 'PLAN' ? routed('direct') : undefined), { branchOf });
    expect(sim.rows[1]!.error).toBe('Skipped: not chosen (PLAN: direct)');
    expect(sim.starts).toEqual(['PLAN#1', 'IMPL#1']);
  });

  it('a route chosen before the run (a resume) still skips the dependents left pending', () => {
    const { rows } = lifecycle('direct');
    Object.assign(rows[0]!, { status: 'completed', route: 'direct', findings: 'chose direct' });
    const sim = simulate(rows, undefined, { runIds: ['ARCH', 'ORCH', 'IMPL', 'TEST'] });
    expect(sim.starts).toEqual(['IMPL#1', 'TEST#1']);
    expect(sim.rows[2]!.error).toBe('Skipped: not chosen (PLAN: direct)');
  });

  it('a failure upstream wins over a route: the dependent is skipped for the failure', () => {
    const rows = [task('A'), task('PLAN'), task('ARCH', 'A;PLAN', { branch: 'architecture' })];
    const sim = simulate(rows, (id) => (id === 'A' ? fail('x') : id === 'PLAN' ? routed('direct') : undefined), {
      concurrency: 1,
    });
    expect(sim.rows[2]!.error).toBe('Dependency failed or skipped: A (failed)');
  });
});

describe('the not-chosen skip cause', () => {
  it('is a success that satisfies dependents, and no failure of the run', () => {
    const row = task('ARCH', '', { status: 'skipped', error: 'Skipped: not chosen (PLAN-001: direct)' });
    expect(parseSkipCause(row.error)).toEqual({ kind: 'not-chosen', source: 'PLAN-001', error: row.error });
    expect(satisfiesDependents(row)).toBe(true);
    expect(skippedForFailure(row)).toBe(false);
  });
});
