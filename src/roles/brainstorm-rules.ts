import type { TaskResult } from '../schema/result.js';
import type { Normalised, ResultCheck } from './rule-types.js';
import { challengerRule } from './challenger-rule.js';
import { evaluatorRule } from './evaluator-rule.js';

/** The brainstorm roles' result rules, in turn: each looks only at its own role. */
export function brainstormRules(role: string, result: TaskResult, check: ResultCheck): Normalised {
  const challenged = challengerRule(role, result, check);
  return challenged.ok ? evaluatorRule(role, challenged.result, check) : challenged;
}
