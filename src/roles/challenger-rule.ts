import type { TaskResult } from '../schema/result.js';
import type { Normalised, ResultCheck, RoleAnswerFields } from './rule-types.js';
import { kSeverityLevels, readSeverity, signalFromSeverity } from './severity.js';

/**
 * What a model's challenger answer must give: the counts in their exact form and the signal
 * from its enum. A constrained server is held to them by the grammar; a free one by the rule
 * below, which also takes counts written loosely.
 */
export const kChallengerAnswerFields: RoleAnswerFields = {
  properties: {
    severity_summary: { type: 'string', pattern: `^${kSeverityLevels.map((level) => `${level}:[0-9]+`).join(' ')}$` },
    gc_signal: { type: 'string', enum: ['REVISION_NEEDED', 'CONVERGED'] },
  },
  required: ['severity_summary', 'gc_signal'],
};

/**
 * The challenger's severity rule (DESIGN.md section 6): the GC check reads the challenger's
 * gc_signal and severity counts, and CRITICAL or HIGH above zero means REVISION_NEEDED.
 *
 * - `derive` (every executor's result): a challenger that gave counts but no gc_signal gets
 *   the signal the counts mean.
 * - `require` (a model's answer): a completed challenger must give all four counts and the
 *   signal they mean, because the GC check takes missing data for CONVERGED, which would end
 *   a brainstorm early. Counts written loosely (`high=2, Critical: 0 …`) are accepted and
 *   rewritten in the exact form; missing or contradictory ones are refused.
 */
export function challengerRule(role: string, result: TaskResult, check: ResultCheck): Normalised {
  if (role !== 'challenger') return { ok: true, result };
  if (check === 'derive') {
    if ((result.gc_signal ?? '') !== '') return { ok: true, result };
    return { ok: true, result: { ...result, gc_signal: signalFromSeverity(result.severity_summary ?? '') } };
  }
  if (result.status !== 'completed') return { ok: true, result };
  const counts = readSeverity(result.severity_summary ?? '');
  if (!kSeverityLevels.every((level) => counts[level] !== undefined)) {
    return {
      ok: false,
      problem: `severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n" with the four counts, got ${JSON.stringify(result.severity_summary ?? null)}`,
    };
  }
  const signal = result.gc_signal?.trim().toUpperCase();
  if (signal !== 'REVISION_NEEDED' && signal !== 'CONVERGED') {
    return { ok: false, problem: `gc_signal must be "REVISION_NEEDED" or "CONVERGED", got ${JSON.stringify(result.gc_signal ?? null)}` };
  }
  const serious = counts.CRITICAL! + counts.HIGH!;
  const expected = serious > 0 ? 'REVISION_NEEDED' : 'CONVERGED';
  if (signal !== expected) return { ok: false, problem: `gc_signal must be ${expected} when CRITICAL + HIGH is ${serious}, got ${signal}` };
  const summary = kSeverityLevels.map((level) => `${level}:${counts[level]}`).join(' ');
  return { ok: true, result: { ...result, gc_signal: signal, severity_summary: summary } };
}
