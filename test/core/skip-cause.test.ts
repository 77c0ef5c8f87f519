import { describe, expect, it } from 'vitest';
import {
  blockedCause,
  causeForDependents,
  convergedCause,
  dependencyCause,
  notChosenCause,
  parseSkipCause,
  rejectedCause,
  satisfiesDependents,
  skippedForFailure,
  supersededCause,
  type SkipCause,
} from '../../src/core/skip-cause.js';
import { task } from './simulate.js';

describe('skip causes: the error text is the exact one, and reads back as the same cause', () => {
  it.each<[string, SkipCause, string]>([
    ['dependency', dependencyCause('W2-04', 'failed'), 'Dependency failed or skipped: W2-04 (failed)'],
    ['blocked', blockedCause('S1', '  too\n risky  '), 'Blocked by checkpoint S1: too risky'],
    ['blocked without findings', blockedCause('S1', ''), 'Blocked by checkpoint S1'],
    ['converged', convergedCause('GC-1'), 'Skipped: GC converged (GC-1)'],
    ['superseded', supersededCause('D1'), 'Skipped: superseded by a new decision of D1'],
    ['not chosen', notChosenCause('PLAN-001', 'direct'), 'Skipped: not chosen (PLAN-001: direct)'],
    ['rejected', rejectedCause('prd', 'DRAFT-002', ' no\n criteria '), 'Blocked by artifact prd of DRAFT-002: no criteria'],
    ['rejected without a summary', rejectedCause('prd', 'DRAFT-002', ''), 'Blocked by artifact prd of DRAFT-002'],
  ])('%s', (_name, cause, text) => {
    expect(cause.error).toBe(text);
    expect(parseSkipCause(text)).toEqual(cause);
  });

  it('a blocked cause keeps at most 120 characters of the findings', () => {
    expect(blockedCause('S1', 'x'.repeat(300)).error).toBe(`Blocked by checkpoint S1: ${'x'.repeat(120)}`);
  });

  it.each<[string, SkipCause['kind'], string]>([
    ['Dependency failed or skipped', 'dependency', ''],
    ['Blocked by checkpoint S10: no', 'blocked', 'S10'],
    ['Skipped: GC converged', 'converged', ''],
    ['Skipped by hand', 'other', ''],
    ['', 'other', ''],
  ])('older or odd texts read back by prefix: %j', (text, kind, source) => {
    expect(parseSkipCause(text)).toEqual({ kind, source, error: text });
  });

  it.each<[string, Partial<Parameters<typeof task>[2]>, boolean, boolean]>([
    ['completed', { status: 'completed' }, true, false],
    ['failed', { status: 'failed', error: 'x' }, false, false],
    ['skipped, dependency', { status: 'skipped', error: 'Dependency failed or skipped: A (failed)' }, false, true],
    ['skipped, blocked', { status: 'skipped', error: 'Blocked by checkpoint S' }, false, true],
    ['skipped, converged', { status: 'skipped', error: 'Skipped: GC converged (G)' }, true, false],
    ['skipped, superseded', { status: 'skipped', error: 'Skipped: superseded by a new decision of D' }, false, false],
    ['skipped, not chosen', { status: 'skipped', error: 'Skipped: not chosen (P: direct)' }, true, false],
    ['skipped, rejected', { status: 'skipped', error: 'Blocked by artifact a of P: bad' }, false, true],
    ['skipped, other', { status: 'skipped', error: 'by hand' }, false, false],
    ['pending with a dependency text', { status: 'pending', error: 'Dependency failed or skipped: A (failed)' }, false, false],
  ])('%s: satisfies dependents %s, counts as a failure %s', (_name, cells, satisfies, failure) => {
    const row = task('T', '', cells);
    expect(satisfiesDependents(row)).toBe(satisfies);
    expect(skippedForFailure(row)).toBe(failure);
  });

  it.each<[string, Partial<Parameters<typeof task>[2]>, string | undefined]>([
    ['completed: none', { status: 'completed' }, undefined],
    ['failed: names it', { status: 'failed', error: 'x' }, 'Dependency failed or skipped: T (failed)'],
    ['skipped for a dependency: the root travels', { status: 'skipped', error: 'Dependency failed or skipped: R (failed)' }, 'Dependency failed or skipped: R (failed)'],
    ['bare dependency text: names it', { status: 'skipped', error: 'Dependency failed or skipped' }, 'Dependency failed or skipped: T (skipped)'],
    ['blocked: the block travels', { status: 'skipped', error: 'Blocked by checkpoint S: no' }, 'Blocked by checkpoint S: no'],
    ['converged: none', { status: 'skipped', error: 'Skipped: GC converged (G)' }, undefined],
    ['superseded: names it', { status: 'skipped', error: 'Skipped: superseded by a new decision of D' }, 'Dependency failed or skipped: T (skipped)'],
    ['pending: names it', { status: '' }, 'Dependency failed or skipped: T (pending)'],
  ])('the cause a dependent gets from a row %s', (_name, cells, error) => {
    expect(causeForDependents(task('T', '', cells))?.error).toBe(error);
  });
});
