export type { AroundAttempt, AttemptHookContext, Pipeline } from './pipeline.js';
export { findPipeline, pipelineFor } from './pipeline-for.js';
export { pipelineRoles } from './roles.js';
export { SettingsReader, type PipelineSettings, type SettingsFile } from './settings.js';
