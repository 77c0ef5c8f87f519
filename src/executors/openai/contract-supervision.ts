import { isCheckpoint } from './contract-schema.js';

const kSupervisionFields = ['supervision_verdict', 'supervision_score'] as const;

/**
 * The supervision rule of model answers: `supervision_verdict` and `supervision_score` count
 * only from a task the pipeline marks as a checkpoint. From any other task they are dropped
 * before the answer is checked, with a note (a warning naming the task): a model that sets
 * `block` unasked would otherwise skip everything downstream. Commands and modules are not
 * held to this: their author sets a verdict on purpose.
 */
export function dropUnaskedSupervision(
  answer: Record<string, unknown>,
  pipeline: string,
  role: string,
): { answer: Record<string, unknown>; notes: string[] } {
  if (isCheckpoint(pipeline, role)) return { answer, notes: [] };
  const given = kSupervisionFields.filter((field) => answer[field] !== undefined && answer[field] !== null);
  const kept = { ...answer };
  for (const field of kSupervisionFields) delete kept[field];
  if (given.length === 0) return { answer: kept, notes: [] };
  const what = given.map((field) => `${field} ${cutJson(answer[field])}`).join(' and ');
  const roleText = role === '' ? 'a task without a role' : `role ${role}`;
  return {
    answer: kept,
    notes: [`the model's ${what} dropped: ${roleText} is not a checkpoint of the ${pipeline} pipeline, so its verdict does not count`],
  };
}

/** A value as JSON, at most 60 characters: it is quoted in a warning. */
function cutJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
