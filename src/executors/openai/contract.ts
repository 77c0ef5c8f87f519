import type { TaskResult } from '../../schema/result.js';
import { checkResultSchema, parseAnswer } from './answer.js';
import { isCheckpoint } from './contract-schema.js';
import { dropUnaskedSupervision } from './contract-supervision.js';
import { checkRole } from './role-check.js';

export { answerFormat } from './contract-schema.js';

/** A model answer held to its contract, with the notes of what was dropped from it; or the problem for the repair request. */
export type ContractAnswer = { ok: true; result: TaskResult; notes: string[] } | { ok: false; problem: string };

/**
 * Reads a model's answer for a task of `role` in `pipeline` and holds it to the model-answer
 * contract, the same that answerFormat sends as the response schema (which a constrained
 * server already obeys, and any other may not):
 * 1. JSON, one object (answer.ts);
 * 2. supervision fields dropped unless the task is a checkpoint (contract-supervision.ts);
 * 3. the result schema (schema/result.ts), which module and command results are held to too;
 * 4. what every answer must give: `status`, and `findings` that say something: an answer of
 *    `{}`, of only an `error`, or `failed` without findings is not a task's result;
 * 5. a checkpoint's verdict, then the role's own rules (role-check.ts), numeric ranges included.
 */
export function readContractAnswer(content: string, finishReason: string | undefined, pipeline: string, role: string): ContractAnswer {
  const parsed = parseAnswer(content, finishReason);
  if (!parsed.ok) return parsed;
  const { answer, notes } = dropUnaskedSupervision(parsed.value, pipeline, role);
  const checked = checkResultSchema(answer);
  if (!checked.ok) return checked;
  const problems = commonProblems(answer, checked.result, isCheckpoint(pipeline, role));
  if (problems.length > 0) return { ok: false, problem: problems.join('; ') };
  const ruled = checkRole(pipeline, role, checked.result);
  return ruled.ok ? { ok: true, result: ruled.result, notes } : ruled;
}

function commonProblems(answer: Record<string, unknown>, result: TaskResult, checkpoint: boolean): string[] {
  const problems: string[] = [];
  // The result schema takes a missing status for completed (a command's plain output is a
  // result); a model must say which it is.
  if (answer.status === undefined) problems.push('"status" is missing: give "completed", or "failed" with the reason in "error"');
  if (result.findings.trim() === '') {
    const onlyError = (result.error ?? '').trim() !== '' ? ' (an "error" alone is not a result)' : '';
    problems.push(`"findings" is missing or empty${onlyError}: state the result, or for a failed task what was tried and why it failed, in at most 500 characters`);
  }
  if (checkpoint && result.status === 'completed' && result.supervision_verdict == null) {
    problems.push('"supervision_verdict" is missing: this task is a checkpoint; give "pass", "warn" or "block"');
  }
  return problems;
}
