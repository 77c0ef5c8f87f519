export type { AroundAttempt, AttemptHookContext, Pipeline } from './pipeline.js';
export { findPipeline, pipelineFor } from './pipeline-for.js';
export { pipelineRoles } from './roles.js';
