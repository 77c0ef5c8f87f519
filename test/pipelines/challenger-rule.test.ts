import { describe, expect, test } from 'vitest';
import { challengerRule } from '../../src/roles/challenger-rule.js';
import { pipelineFor } from '../../src/pipelines/pipeline-for.js';
import type { ResultCheck } from '../../src/roles/role-rules.js';
import type { TaskResult } from '../../src/schema/result.js';

const result = (fields: Partial<TaskResult>): TaskResult => ({ status: 'completed', findings: 'f', ...fields });

describe('the challenger severity rule, derive (every executor)', () => {
  test.each([
    // [role, gc_signal, severity_summary, status, expected gc_signal]
    ['challenger', undefined, 'CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1', 'completed', 'REVISION_NEEDED'],
    ['challenger', '', 'critical=1', 'completed', 'REVISION_NEEDED'],
    ['challenger', undefined, 'CRITICAL:0 HIGH:0 MEDIUM:3 LOW:1', 'completed', 'CONVERGED'],
    ['challenger', undefined, 'no counts', 'completed', ''],
    ['challenger', undefined, undefined, 'completed', ''],
    // A failed challenger's counts still say what they mean.
    ['challenger', undefined, 'HIGH:1', 'failed', 'REVISION_NEEDED'],
    // A signal the challenger gave is kept, even one the counts contradict.
    ['challenger', 'CONVERGED', 'HIGH:1', 'completed', 'CONVERGED'],
    ['challenger', 'whatever', 'HIGH:1', 'completed', 'whatever'],
    // Other roles are left alone.
    ['ideator', undefined, 'HIGH:1', 'completed', undefined],
    ['Challenger', undefined, 'HIGH:1', 'completed', undefined],
  ] as const)('%s signal %j counts %j (%s) → %j', (role, signal, summary, status, expected) => {
    const input = result({ status, ...(signal === undefined ? {} : { gc_signal: signal }), ...(summary === undefined ? {} : { severity_summary: summary }) });
    const ruled = challengerRule(role, input, 'derive');
    expect(ruled.ok).toBe(true);
    if (!ruled.ok) return;
    expect(ruled.result.gc_signal).toBe(expected);
    expect(ruled.result.severity_summary).toBe(input.severity_summary);
    expect(ruled.result.findings).toBe('f');
  });
});

describe('the challenger severity rule, require (a model answer)', () => {
  test.each([
    ['REVISION_NEEDED', 'CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1', 'REVISION_NEEDED', 'CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1'],
    // Loose counts and signal are accepted and rewritten in the exact form.
    [' converged ', 'low=4, Medium: 1; high:0 critical = 0', 'CONVERGED', 'CRITICAL:0 HIGH:0 MEDIUM:1 LOW:4'],
  ])('%j %j → %j %j', (signal, summary, expectedSignal, expectedSummary) => {
    const ruled = challengerRule('challenger', result({ gc_signal: signal, severity_summary: summary }), 'require');
    expect(ruled).toEqual({ ok: true, result: result({ gc_signal: expectedSignal, severity_summary: expectedSummary }) });
  });

  test.each([
    ['REVISION_NEEDED', 'HIGH:2', /^severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n" with the four counts, got "HIGH:2"$/],
    ['REVISION_NEEDED', undefined, /with the four counts, got null$/],
    [undefined, 'CRITICAL:0 HIGH:0 MEDIUM:0 LOW:0', /^gc_signal must be "REVISION_NEEDED" or "CONVERGED", got null$/],
    ['maybe', 'CRITICAL:0 HIGH:0 MEDIUM:0 LOW:0', /got "maybe"$/],
    ['CONVERGED', 'CRITICAL:1 HIGH:0 MEDIUM:0 LOW:0', /^gc_signal must be REVISION_NEEDED when CRITICAL \+ HIGH is 1, got CONVERGED$/],
    ['REVISION_NEEDED', 'CRITICAL:0 HIGH:0 MEDIUM:9 LOW:0', /^gc_signal must be CONVERGED when CRITICAL \+ HIGH is 0, got REVISION_NEEDED$/],
  ])('refuses signal %j with counts %j', (signal, summary, problem) => {
    const ruled = challengerRule(
      'challenger',
      result({ ...(signal === undefined ? {} : { gc_signal: signal }), ...(summary === undefined ? {} : { severity_summary: summary }) }),
      'require',
    );
    expect(ruled.ok).toBe(false);
    if (ruled.ok) return;
    expect(ruled.problem).toMatch(problem);
  });

  test('a failed challenger and other roles are not held to it', () => {
    const failed = result({ status: 'failed', severity_summary: 'nothing' });
    expect(challengerRule('challenger', failed, 'require')).toEqual({ ok: true, result: failed });
    const other = result({ severity_summary: 'HIGH:1' });
    expect(challengerRule('synthesizer', other, 'require')).toEqual({ ok: true, result: other });
  });
});

describe('which pipeline applies which check', () => {
  const loose = result({ severity_summary: 'HIGH:1' });
  test.each([
    // [pipeline, check, ok, gc_signal after]
    ['brainstorm', 'derive', true, 'REVISION_NEEDED'],
    ['brainstorm', 'require', false, undefined],
    ['generic', 'derive', true, 'REVISION_NEEDED'],
    ['generic', 'require', true, undefined],
    ['analyze', 'derive', true, undefined],
    ['analyze', 'require', true, undefined],
  ] as const)('%s %s: ok %s, gc_signal %j', (pipeline, check: ResultCheck, ok, signal) => {
    const ruled = pipelineFor(pipeline).normaliseResult('challenger', loose, check);
    expect(ruled.ok).toBe(ok);
    if (ruled.ok) expect(ruled.result.gc_signal).toBe(signal);
  });
});
