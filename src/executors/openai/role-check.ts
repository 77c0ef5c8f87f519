import { findRoleRules } from '../../roles/role-rules.js';
import type { TaskResult } from '../../schema/result.js';
import type { Answer } from './answer.js';

/**
 * What a role's result must carry beyond the schema: the session's pipeline holds a model's
 * answer to its rules (the brainstorm challenger's severity counts and signal, which the GC
 * check reads); what they refuse gets the repair request.
 */
export function checkRole(pipeline: string, role: string, result: TaskResult): Answer {
  return findRoleRules(pipeline)?.normaliseResult(role, result, 'require') ?? { ok: true, result };
}
