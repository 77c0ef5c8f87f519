import type { InteractiveHandler } from '../../interactive/types.js';
import { roleRulesFor } from '../../roles/role-rules.js';
import type { Pipeline } from '../pipeline.js';
import { topicSettings } from '../settings.js';
import { reuseExplorations } from '../analyze/explorer-cache.js';
import { genericStarterTasks } from './starter.js';

/**
 * Plain batch work, with no interactive handler: a task needs only an id (and something to
 * run it); a role and a description are its own columns, when it has them. A generic session
 * may still hold rows of the other pipelines' roles (a session with no session.json is
 * generic as soon as one role is not a brainstorm role), and those keep the rules that
 * applied to them before pipelines owned their rules: an `explorer` reuses explorations,
 * and a `challenger`'s signal is derived from its counts (roles/role-rules.ts).
 */
export const genericPipeline = {
  name: 'generic',
  // The cells a run writes; the brainstorm's own columns (angle, gc_round, title, …) are not forced on a plain batch.
  columns: { required: ['id'], written: ['wave', 'status', 'findings', 'error'] },
  settings: topicSettings,
  ...roleRulesFor('generic'),
  handlers: new Map<string, InteractiveHandler>(),
  aroundAttempt: reuseExplorations,
  /** The starter rows `init` lays out. */
  decompose: genericStarterTasks,
} satisfies Pipeline;
