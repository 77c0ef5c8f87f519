import { cutText } from '../text/cut-text.js';
import { errorLine } from '../text/error-line.js';
import { taskResultSchema } from '../schema/result.js';
import type { PipelineName } from '../schema/session.js';
import { nestsDeeperThan, tooDeepText } from '../text/json-depth.js';
import type { AttemptReply, TaskLimits } from './messages.js';
import { describe } from './module.js';
import { applyReplyRules, type ReplyRules } from './reply-rules.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import type { AttemptOutcome, TaskInput } from './types.js';

/**
 * Turns an executor's raw outcome into a reply, as data: the result is validated with zod
 * (an invalid one fails the task naming the bad field), then held to the rules of every
 * reply (reply-rules.ts: texts made safe, long findings and the result's artifacts fitted
 * to `limits` and returned as files to write, with the task's discovery record, the
 * pipeline's result rules). Nothing is written here: a worker runs this, and the engine
 * writes the files on its main thread (run/record/attempt-files.ts). A coordinator holds a
 * remote worker's reply to the same rules again (backend/bullmq/trust/reply-schema.ts).
 *
 * Secrets of the environment become `***` before the result is validated, so that no
 * message about a bad field quotes one. Caps that were hit are noted in the findings and
 * in `notes`.
 */
export function finishAttempt(
  task: Pick<TaskInput, 'id' | 'row'>,
  outcome: AttemptOutcome,
  limits: TaskLimits = {},
  pipeline: PipelineName = 'generic',
): AttemptReply {
  const rules: ReplyRules = { pipeline, role: task.row.role ?? '', limits };
  const ruled = (reply: AttemptReply) => applyReplyRules(task.id, reply, rules, outcome.notes ?? []);
  const extras = {
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    ...(outcome.requests ? { requests: outcome.requests } : {}),
  };
  if (outcome.kind === 'error') {
    return ruled({
      kind: 'error',
      errorClass: outcome.errorClass,
      error: outcome.error,
      ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
      ...extras,
    });
  }
  const invalid = (detail: string): AttemptReply => ruled({ kind: 'error', errorClass: 'invalid-output', error: `Invalid result: ${detail}`, ...extras });
  try {
    // Through JSON first: a module's result may hold cycles, BigInts, functions or getters
    // that throw; what is left is plain data that can be walked, cloned and written.
    let plain: unknown;
    try {
      const json = JSON.stringify(outcome.result);
      if (json !== undefined && nestsDeeperThan(json)) return invalid(tooDeepText());
      plain = json === undefined ? outcome.result : JSON.parse(json);
    } catch (error) {
      return invalid(`not JSON data (${describe(error).replace(/\s+/g, ' ')})`);
    }
    const parsed = taskResultSchema.safeParse(SecretScrubber.fromEnv().deep(plain));
    if (!parsed.success) {
      return invalid(
        parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'result'}: ${issue.message}`).join('; '),
      );
    }
    const result = parsed.data;
    if (result.id !== undefined && result.id !== task.id) return invalid(`id is ${cutText(result.id, 100)}, expected ${task.id}`);
    return ruled({
      kind: 'finished',
      status: result.status,
      findings: result.findings,
      gc_signal: result.gc_signal ?? '',
      severity_summary: result.severity_summary ?? '',
      error: result.status === 'failed' ? failureText(result.error, result.findings) : (result.error ?? ''),
      discoveries: result.discoveries ?? [],
      wisdom: result.wisdom ?? {},
      artifacts: result.artifacts ?? [],
      // What only the record holds; the rules fill in the rest.
      discovery: {
        taskId: task.id,
        role: rules.role,
        status: result.status,
        findings: '',
        error: null,
        keyFindings: result.key_findings,
        decisions: result.decisions,
        filesModified: result.files_modified,
        verification: result.verification,
        qualityScore: result.quality_score,
        artifacts: [],
      },
      supervision_verdict: result.supervision_verdict,
      supervision_score: result.supervision_score,
      ...(result.route === undefined ? {} : { route: result.route }),
      ...(result.artifact_manifests === undefined ? {} : { manifests: result.artifact_manifests }),
      ...(result.artifact_validations === undefined ? {} : { validations: result.artifact_validations }),
      ...extras,
    });
  } catch (error) {
    // A result too deep or too big to handle is the task's fault, not the worker's.
    return invalid(`cannot be processed (${describe(error).replace(/\s+/g, ' ')})`);
  }
}

/**
 * The error of a task that reported failure: its own error, else its findings, which a
 * model's contract asks to say what was tried and why it failed (a model answer has no
 * other place for its reason). The reply rules clean it as every error.
 */
export function failureText(error: string | undefined, findings: string): string {
  if (error !== undefined && error.trim() !== '') return error;
  const reason = errorLine(findings);
  return reason === '' ? 'The task reported failure' : `The task reported failure: ${reason}`;
}
