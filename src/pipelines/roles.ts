import type { PipelineName } from '../schema/session.js';
import { kBrainstormRoles } from '../roles/role-rules.js';
import { pipelineFor } from './pipeline-for.js';

/** The roles a pipeline knows; `generic` accepts any role, or none (null here). */
export function pipelineRoles(pipeline: PipelineName): ReadonlySet<string> | null {
  return pipelineFor(pipeline).roles;
}

/**
 * The pipeline of a session that names none: brainstorm when every role is a brainstorm
 * role and there is at least one (so the seed's files behave as before), generic otherwise.
 * Empty roles do not count.
 */
export function inferPipeline(roles: Iterable<string>): PipelineName {
  let seen = false;
  for (const role of roles) {
    if (role === '') continue;
    if (!kBrainstormRoles.has(role)) return 'generic';
    seen = true;
  }
  // A file without roles (a plain batch of ids and columns of its own) is no brainstorm.
  return seen ? 'brainstorm' : 'generic';
}

/**
 * The end of an `Invalid role` message: which pipeline is in force, the roles it takes,
 * and how to take any role.
 */
export function roleHint(pipeline: PipelineName): string {
  const roles = pipelineRoles(pipeline);
  const known = roles === null ? 'any role' : [...roles].join(', ');
  return `the ${pipeline} pipeline takes ${known}; for roles of your own, pass --pipeline generic or set "pipeline": "generic" in session.json`;
}
