export type { AroundAttempt, AttemptHookContext, Normalised, Pipeline, ResultCheck } from './pipeline.js';
export { findPipeline, pipelineFor } from './pipeline-for.js';
export { pipelineRoles } from './roles.js';
