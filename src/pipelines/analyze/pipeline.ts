import { roleRulesFor } from '../../roles/role-rules.js';
import { kSeedPipelineColumns, type Pipeline } from '../pipeline.js';
import { analyzeSettings } from './settings.js';
import { analyzeTasks } from './decompose.js';
import { DiscussionGate } from './discussion-gate.js';
import { reuseExplorations } from './explorer-cache.js';

/** explorer → analyst → discussant → synthesizer (seed 002). */
export const analyzePipeline = {
  name: 'analyze',
  columns: kSeedPipelineColumns,
  settings: analyzeSettings,
  ...roleRulesFor('analyze'),
  handlers: new Map([['discussant', new DiscussionGate()]]),
  aroundAttempt: reuseExplorations,
  /** The rows `init` lays out. */
  decompose: analyzeTasks,
} satisfies Pipeline;
