import type { Pipeline } from '../pipeline.js';
import { challengerRule } from './challenger-rule.js';
import { brainstormTasks } from './decompose.js';
import { GcController } from './gc-controller.js';

/** ideator → challenger → GC check → revision → synthesizer → evaluator (seed 004). */
export const brainstormPipeline = {
  name: 'brainstorm',
  roles: new Set(['ideator', 'challenger', 'synthesizer', 'evaluator', 'gc-controller']),
  handlers: new Map([['gc-controller', new GcController()]]),
  normaliseResult: challengerRule,
  /** The rows `init` lays out. */
  decompose: brainstormTasks,
} satisfies Pipeline;
