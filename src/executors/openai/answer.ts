import { taskResultSchema, type TaskResult } from '../../schema/result.js';
import { describe } from '../module.js';

/** A reply's content read as a result, or the problem worded for the repair request. */
export type Answer = { ok: true; result: TaskResult } | { ok: false; problem: string };

/** Characters of a bad answer quoted in the error of an attempt that stays invalid. */
const kBadAnswerQuote = 200;

/**
 * Parses a reply's content and checks it against the result schema. A role's own rules
 * (role-check.ts) and the model-answer contract (contract.ts) come after, on a result that passed.
 */
export function readAnswer(content: string, finishReason: string | undefined): Answer {
  const parsed = parseAnswer(content, finishReason);
  return parsed.ok ? checkResultSchema(parsed.value) : parsed;
}

/** A reply's content as a JSON object (a whole-answer code fence taken off), or the problem. */
export function parseAnswer(content: string, finishReason: string | undefined): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  const cutOff = finishReason === 'length' ? ' (the answer was cut off at the token limit: write less, and put long text in artifacts)' : '';
  const text = stripCodeFence(content.trim());
  if (text === '') return { ok: false, problem: `the answer was empty${cutOff}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the answer is not valid JSON (${describe(error)})${cutOff}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: 'the answer is JSON but not an object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** A JSON object checked against the result schema, its defaults filled in. */
export function checkResultSchema(value: Record<string, unknown>): Answer {
  const parsed = taskResultSchema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'result'}: ${issue.message}`)
      .join('; ');
    return { ok: false, problem: `the answer does not match the result schema (${details})` };
  }
  return { ok: true, result: parsed.data };
}

/** The start of a bad answer, for the error of an attempt whose repair failed too. */
export function quoteAnswer(content: string): string {
  const trimmed = content.trim();
  if (trimmed === '') return '';
  const quoted = trimmed.length > kBadAnswerQuote ? `${trimmed.slice(0, kBadAnswerQuote)}…` : trimmed;
  return `; the answer began: ${quoted}`;
}

/** Local models often wrap JSON in a markdown fence even when asked not to. */
function stripCodeFence(text: string): string {
  const fenced = /^```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return fenced ? fenced[1]!.trim() : text;
}
