import type { InteractiveHandler } from '../../interactive/types.js';
import type { Pipeline } from '../pipeline.js';
import { reuseExplorations } from '../analyze/explorer-cache.js';
import { challengerRule } from '../brainstorm/challenger-rule.js';
import { genericStarterTasks } from './starter.js';

/**
 * Any non-empty role: plain batch work, with no interactive handler. A generic session
 * may still hold rows of the other pipelines' roles (a session with no session.json is
 * generic as soon as one role is not a brainstorm role), and those keep the rules that
 * applied to them before pipelines owned their rules: an `explorer` reuses explorations,
 * and a `challenger`'s signal is derived from its counts. A model's answer is not held to
 * the challenger's stricter form: the generic prompt does not ask for it.
 */
export const genericPipeline = {
  name: 'generic',
  roles: null,
  handlers: new Map<string, InteractiveHandler>(),
  normaliseResult: (role, result, check) => (check === 'derive' ? challengerRule(role, result, check) : { ok: true, result }),
  answerFields: new Map(),
  // A `supervisor` task (the seed's CHECKPOINT tasks; prompts/generic/supervisor.md) judges
  // the work upstream of it, and its `block` stops what comes after.
  checkpointRoles: new Set(['supervisor']),
  aroundAttempt: reuseExplorations,
  /** The starter rows `init` lays out. */
  decompose: genericStarterTasks,
} satisfies Pipeline;
