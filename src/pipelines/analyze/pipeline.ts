import type { Pipeline } from '../pipeline.js';
import { analyzeTasks } from './decompose.js';
import { DiscussionGate } from './discussion-gate.js';
import { reuseExplorations } from './explorer-cache.js';

/** explorer → analyst → discussant → synthesizer (seed 002). */
export const analyzePipeline = {
  name: 'analyze',
  roles: new Set(['explorer', 'analyst', 'discussant', 'synthesizer']),
  handlers: new Map([['discussant', new DiscussionGate()]]),
  // No role of this pipeline has a result rule.
  normaliseResult: (_role, result) => ({ ok: true, result }),
  answerFields: new Map(),
  // Its gate is the discussion gate, answered by a person; no prompt asks a model for a verdict.
  checkpointRoles: new Set<string>(),
  aroundAttempt: reuseExplorations,
  /** The rows `init` lays out. */
  decompose: analyzeTasks,
} satisfies Pipeline;
