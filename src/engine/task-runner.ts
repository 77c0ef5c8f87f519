import pLimit from 'p-limit';
import { finishAttempt } from '../executors/finish-attempt.js';
import type { TaskLimits, WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { WorkerPool } from '../executors/worker-pool.js';
import type { DiscoveryFilePolicy } from '../knowledge/discovery-files.js';
import { buildPromptContext, type PromptContext } from '../knowledge/prompt-context.js';
import { buildUpstream } from '../knowledge/upstream.js';
import type { Pipeline } from '../pipelines/pipeline.js';

export interface TaskRunnerSetup {
  pool: WorkerPool;
  /** The session's pipeline: its attempt hook wraps every attempt, and workers apply its result rules. */
  pipeline: Pipeline;
  sessionDir: string;
  /** The session's topic, for model prompts. */
  topic: string;
  limits: TaskLimits;
  discoveryFiles: DiscoveryFilePolicy;
  /** Requests in flight at once to the model endpoint; undefined when the executor calls none. */
  endpointConcurrency: number | undefined;
  warn: (message: string) => void;
}

/**
 * How a run executes one attempt of a task, in front of the worker pool: the pipeline's
 * attempt hook (the exploration cache) goes around it, model calls share the endpoint's
 * limit and get the session's prompt context, and every request carries the run's output
 * caps and the pipeline's name.
 */
export function createTaskRunner(setup: TaskRunnerSetup): (request: WorkerRequest) => Promise<WorkerReply> {
  const { pool, pipeline, limits, discoveryFiles, warn } = setup;
  const endpoint = setup.endpointConcurrency === undefined ? undefined : pLimit(setup.endpointConcurrency);

  /** A model prompt's view of the session, read here on the main thread: workers do not read the session folder. */
  const promptOf = (request: WorkerRequest): { prompt?: PromptContext } => {
    if (request.executor.type !== 'openai') return {};
    const session = { pipeline: pipeline.name, topic: setup.topic };
    return { prompt: buildPromptContext(setup.sessionDir, session, buildUpstream(setup.sessionDir, request.deps)) };
  };

  const execute = async (request: WorkerRequest): Promise<WorkerReply> => {
    const limited: WorkerRequest = { ...request, limits, discoveryFiles, pipeline: pipeline.name, ...promptOf(request) };
    return endpoint ? endpoint(() => pool.run(limited)) : pool.run(limited);
  };
  const around = pipeline.aroundAttempt?.({
    sessionDir: setup.sessionDir,
    warn,
    finish: (request, result) => finishAttempt(request.task, { kind: 'result', result }, limits, discoveryFiles, pipeline.name),
  });
  return around ? (request) => around(request, execute) : execute;
}
