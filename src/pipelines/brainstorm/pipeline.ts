import type { Pipeline } from '../pipeline.js';
import { kChallengerAnswerFields } from './challenger-rule.js';
import { brainstormTasks } from './decompose.js';
import { kEvaluatorAnswerFields } from './evaluator-rule.js';
import { GcController } from './gc-controller.js';
import { brainstormRules } from './result-rules.js';

/** ideator → challenger → GC check → revision → synthesizer → evaluator (seed 004). */
export const brainstormPipeline = {
  name: 'brainstorm',
  roles: new Set(['ideator', 'challenger', 'synthesizer', 'evaluator', 'gc-controller']),
  handlers: new Map([['gc-controller', new GcController()]]),
  normaliseResult: brainstormRules,
  answerFields: new Map([
    ['challenger', kChallengerAnswerFields],
    ['evaluator', kEvaluatorAnswerFields],
  ]),
  // Its gate is the GC check, whose verdict is computed from the challenger's counts; no
  // prompt of this pipeline asks a model for a supervision verdict.
  checkpointRoles: new Set<string>(),
  /** The rows `init` lays out. */
  decompose: brainstormTasks,
} satisfies Pipeline;
