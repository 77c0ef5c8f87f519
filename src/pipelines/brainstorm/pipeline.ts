import { roleRulesFor } from '../../roles/role-rules.js';
import { kSeedPipelineColumns, type Pipeline } from '../pipeline.js';
import { brainstormSettings } from './settings.js';
import { brainstormTasks } from './decompose.js';
import { GcController } from './gc-controller.js';

/** ideator → challenger → GC check → revision → synthesizer → evaluator (seed 004). */
export const brainstormPipeline = {
  name: 'brainstorm',
  columns: kSeedPipelineColumns,
  settings: brainstormSettings,
  ...roleRulesFor('brainstorm'),
  handlers: new Map([['gc-controller', new GcController()]]),
  /** The rows `init` lays out. */
  decompose: brainstormTasks,
} satisfies Pipeline;
