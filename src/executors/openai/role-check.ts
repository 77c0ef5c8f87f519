import type { TaskResult } from '../../schema/result.js';
import type { Answer } from './answer.js';

const kSeverityLevels = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;

/**
 * What a role's result must carry beyond the schema: the GC check reads the challenger's
 * signal and counts, and takes missing ones for CONVERGED, which would end a brainstorm
 * early. Counts written loosely (`high=2, Critical: 0 …`) are accepted and rewritten in the
 * exact form; missing or contradictory ones get the repair request.
 *
 * A brainstorm rule kept here, unchanged, only until the brainstorm Pipeline owns it (issue 11).
 */
export function checkRole(pipeline: string, role: string, result: TaskResult): Answer {
  if (pipeline !== 'brainstorm' || role !== 'challenger' || result.status !== 'completed') return { ok: true, result };
  const summary = result.severity_summary ?? '';
  const counts = new Map<string, number>();
  for (const match of summary.matchAll(/\b(critical|high|medium|low)\s*[:=]\s*(\d+)/gi)) {
    counts.set(match[1]!.toUpperCase(), Number(match[2]));
  }
  if (!kSeverityLevels.every((level) => counts.has(level))) {
    return {
      ok: false,
      problem: `severity_summary must be exactly "CRITICAL:n HIGH:n MEDIUM:n LOW:n" with the four counts, got ${JSON.stringify(result.severity_summary ?? null)}`,
    };
  }
  const signal = result.gc_signal?.trim().toUpperCase();
  if (signal !== 'REVISION_NEEDED' && signal !== 'CONVERGED') {
    return { ok: false, problem: `gc_signal must be "REVISION_NEEDED" or "CONVERGED", got ${JSON.stringify(result.gc_signal ?? null)}` };
  }
  const serious = counts.get('CRITICAL')! + counts.get('HIGH')!;
  const expected = serious > 0 ? 'REVISION_NEEDED' : 'CONVERGED';
  if (signal !== expected) return { ok: false, problem: `gc_signal must be ${expected} when CRITICAL + HIGH is ${serious}, got ${signal}` };
  return {
    ok: true,
    result: { ...result, gc_signal: signal, severity_summary: kSeverityLevels.map((level) => `${level}:${counts.get(level)}`).join(' ') },
  };
}
