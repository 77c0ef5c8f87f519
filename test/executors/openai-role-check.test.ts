import { describe, expect, test } from 'vitest';
import { checkRole } from '../../src/executors/openai/role-check.js';
import type { TaskResult } from '../../src/schema/result.js';

function challenger(fields: Partial<TaskResult>): TaskResult {
  return { status: 'completed', findings: 'Reviewed 3 ideas', ...fields };
}

describe('checkRole: the brainstorm challenger', () => {
  test.each([
    ['exact counts', 'CRITICAL:0 HIGH:1 MEDIUM:2 LOW:3', 'REVISION_NEEDED', 'CRITICAL:0 HIGH:1 MEDIUM:2 LOW:3', 'REVISION_NEEDED'],
    ['loose counts, any case and order', 'low=3, medium: 2; Critical:1 high = 0', ' revision_needed ', 'CRITICAL:1 HIGH:0 MEDIUM:2 LOW:3', 'REVISION_NEEDED'],
    ['nothing serious', 'CRITICAL:0 HIGH:0 MEDIUM:5 LOW:1', 'converged', 'CRITICAL:0 HIGH:0 MEDIUM:5 LOW:1', 'CONVERGED'],
  ])('%s: accepted and rewritten in the exact form', (_name, summary, signal, exactSummary, exactSignal) => {
    expect(checkRole('brainstorm', 'challenger', challenger({ severity_summary: summary, gc_signal: signal }))).toEqual({
      ok: true,
      result: challenger({ severity_summary: exactSummary, gc_signal: exactSignal }),
    });
  });

  test.each([
    ['no summary', undefined, 'CONVERGED', 'severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n" with the four counts, got null'],
    ['a count missing', 'CRITICAL:0 HIGH:0 MEDIUM:1', 'CONVERGED', 'severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n" with the four counts, got "CRITICAL:0 HIGH:0 MEDIUM:1"'],
    ['no signal', 'CRITICAL:0 HIGH:0 MEDIUM:0 LOW:0', undefined, 'gc_signal must be "REVISION_NEEDED" or "CONVERGED", got null'],
    ['an unknown signal', 'CRITICAL:0 HIGH:0 MEDIUM:0 LOW:0', 'DONE', 'gc_signal must be "REVISION_NEEDED" or "CONVERGED", got "DONE"'],
    ['CONVERGED with a HIGH', 'CRITICAL:0 HIGH:2 MEDIUM:0 LOW:0', 'CONVERGED', 'gc_signal must be REVISION_NEEDED when CRITICAL + HIGH is 2, got CONVERGED'],
    ['REVISION_NEEDED with nothing serious', 'CRITICAL:0 HIGH:0 MEDIUM:4 LOW:0', 'REVISION_NEEDED', 'gc_signal must be CONVERGED when CRITICAL + HIGH is 0, got REVISION_NEEDED'],
  ])('%s: the repair request says what is wrong', (_name, summary, signal, problem) => {
    const fields: Partial<TaskResult> = {
      ...(summary === undefined ? {} : { severity_summary: summary }),
      ...(signal === undefined ? {} : { gc_signal: signal }),
    };
    expect(checkRole('brainstorm', 'challenger', challenger(fields))).toEqual({ ok: false, problem });
  });
});

describe('checkRole: everything else passes unchanged', () => {
  test.each([
    ['a failed challenger', 'brainstorm', 'challenger', challenger({ status: 'failed', error: 'no ideas to review' })],
    ['another brainstorm role', 'brainstorm', 'ideator', challenger({})],
    ['a challenger of another pipeline', 'analyze', 'challenger', challenger({ gc_signal: 'maybe' })],
  ])('%s', (_name, pipeline, role, result) => {
    expect(checkRole(pipeline, role, result)).toEqual({ ok: true, result });
  });
});
