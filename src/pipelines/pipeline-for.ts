import { kPipelines, type PipelineName } from '../schema/session.js';
import { analyzePipeline } from './analyze/pipeline.js';
import { brainstormPipeline } from './brainstorm/pipeline.js';
import { genericPipeline } from './generic/pipeline.js';
import { lifecyclePipeline } from './lifecycle/pipeline.js';
import type { Pipeline } from './pipeline.js';

const kPipelineObjects: Record<PipelineName, Pipeline> = {
  brainstorm: brainstormPipeline,
  analyze: analyzePipeline,
  generic: genericPipeline,
  lifecycle: lifecyclePipeline,
};

/** The Pipeline object of a pipeline name. */
export function pipelineFor(name: PipelineName): Pipeline {
  return kPipelineObjects[name];
}

/**
 * The Pipeline object of a name that came from outside (the prompt context an attempt's
 * request carries, which may come from anywhere); undefined when no pipeline has it.
 */
export function findPipeline(name: string): Pipeline | undefined {
  return (kPipelines as readonly string[]).includes(name) ? kPipelineObjects[name as PipelineName] : undefined;
}
