import type { PipelineName } from '../schema/session.js';

/** The roles each pipeline knows; `generic` accepts any non-empty role (null here). */
const kPipelineRoles: Record<PipelineName, ReadonlySet<string> | null> = {
  brainstorm: new Set(['ideator', 'challenger', 'synthesizer', 'evaluator', 'gc-controller']),
  analyze: new Set(['explorer', 'analyst', 'discussant', 'synthesizer']),
  generic: null,
};

export function pipelineRoles(pipeline: PipelineName): ReadonlySet<string> | null {
  return kPipelineRoles[pipeline];
}
