import { fitFindings, writeArtifact } from '../knowledge/artifacts.js';
import { writeDiscoveryFile } from '../knowledge/discovery-files.js';
import { signalFromSeverity } from '../pipelines/brainstorm/severity.js';
import { taskResultSchema } from '../schema/result.js';
import type { WorkerReply } from './messages.js';
import type { AttemptOutcome, TaskInput } from './types.js';

/**
 * Turns an executor's raw outcome into a reply: the result is validated with zod (an
 * invalid one fails the task naming the bad field), long findings and the result's
 * artifacts are written to artifacts/, and a finished task gets its discovery file. A
 * challenger that gave severity counts but no gc_signal gets it derived from the counts.
 */
export function finishAttempt(task: Pick<TaskInput, 'id' | 'session' | 'row'>, outcome: AttemptOutcome): WorkerReply {
  if (outcome.kind === 'error') return outcome;
  const usage = outcome.usage ? { usage: outcome.usage } : {};
  const parsed = taskResultSchema.safeParse(outcome.result);
  if (!parsed.success) {
    const details = parsed.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'result'}: ${issue.message}`)
      .join('; ');
    return { kind: 'error', errorClass: 'invalid-output', error: `Invalid result: ${details}`, ...usage };
  }
  const result = parsed.data;
  if (result.id !== undefined && result.id !== task.id) {
    return { kind: 'error', errorClass: 'invalid-output', error: `Invalid result: id is ${result.id}, expected ${task.id}`, ...usage };
  }
  const artifacts: string[] = [];
  const fitted = fitFindings(task.session, task.id, result.findings);
  if (fitted.artifact) artifacts.push(fitted.artifact);
  for (const artifact of result.artifacts ?? []) {
    artifacts.push(writeArtifact(task.session, task.id, artifact.name, artifact.content));
  }
  const error = result.error ?? (result.status === 'failed' ? 'The task reported failure' : '');
  writeDiscoveryFile(task.session, {
    taskId: task.id,
    role: task.row.role ?? '',
    status: result.status,
    findings: fitted.cell,
    error: error === '' ? null : error,
    keyFindings: result.key_findings,
    decisions: result.decisions,
    filesModified: result.files_modified,
    verification: result.verification,
    qualityScore: result.quality_score,
    supervisionVerdict: result.supervision_verdict,
    artifacts,
  });
  return {
    kind: 'finished',
    status: result.status,
    findings: fitted.cell,
    gc_signal: result.gc_signal || (task.row.role === 'challenger' ? signalFromSeverity(result.severity_summary ?? '') : ''),
    severity_summary: result.severity_summary ?? '',
    error,
    discoveries: result.discoveries ?? [],
    wisdom: result.wisdom ?? {},
    artifacts,
    supervision_verdict: result.supervision_verdict,
    supervision_score: result.supervision_score,
    ...usage,
  };
}
