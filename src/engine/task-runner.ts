import pLimit from 'p-limit';
import { isFolderWriteFailure } from '../csv/write-all.js';
import { finishAttempt } from '../executors/finish-attempt.js';
import type { TaskLimits, WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { WorkerPool } from '../executors/worker-pool.js';
import type { DiscoveryFilePolicy } from '../knowledge/discovery-files.js';
import { angleKey, type ExplorationCache } from '../knowledge/exploration-cache.js';
import { buildPromptContext, type PromptContext } from '../knowledge/prompt-context.js';
import { buildUpstream } from '../knowledge/upstream.js';

export interface TaskRunnerSetup {
  pool: WorkerPool;
  explorations: ExplorationCache;
  limits: TaskLimits;
  discoveryFiles: DiscoveryFilePolicy;
  /** Requests in flight at once to the model endpoint; undefined when the executor calls none. */
  endpointConcurrency: number | undefined;
  warn: (message: string) => void;
  /** Where model prompts read the session from; undefined when the executor makes no model calls. */
  prompts: { sessionDir: string; pipeline: string; topic: string } | undefined;
}

/**
 * How a run executes one attempt of a task, in front of the worker pool: an explorer
 * whose angle was explored before in the session reuses that result (seed 000) — also
 * when the first exploration of the angle is still running, which it then waits for —,
 * model calls share the endpoint's limit, and every request carries the run's output caps.
 * The engine's main thread is the cache's only writer.
 */
export function createTaskRunner(setup: TaskRunnerSetup): (request: WorkerRequest) => Promise<WorkerReply> {
  const { pool, explorations, limits, discoveryFiles, warn } = setup;
  const endpoint = setup.endpointConcurrency === undefined ? undefined : pLimit(setup.endpointConcurrency);
  const exploring = new Map<string, Promise<unknown>>();

  const execute = (request: WorkerRequest): Promise<WorkerReply> => {
    const limited: WorkerRequest = { ...request, limits, discoveryFiles, ...promptOf(request) };
    return endpoint ? endpoint(() => pool.run(limited)) : pool.run(limited);
  };

  /** A model prompt's view of the session, read here on the main thread: workers do not read the session folder. */
  const promptOf = (request: WorkerRequest): { prompt?: PromptContext } => {
    const prompts = setup.prompts;
    if (prompts === undefined || request.executor.type !== 'openai') return {};
    return { prompt: buildPromptContext(prompts.sessionDir, prompts, buildUpstream(prompts.sessionDir, request.deps)) };
  };

  const reuse = (request: WorkerRequest): WorkerReply | undefined => {
    const cached = explorations.lookup(request.task.row.angle ?? '');
    // A task run again (a rerun) explores anew rather than reading back its own result.
    if (!cached || cached.createdBy === request.task.id) return undefined;
    warn(`${request.task.id} reused the exploration of ${cached.createdBy} (angle ${request.task.row.angle})`);
    return finishAttempt(request.task, { kind: 'result', result: { findings: cached.findings } }, limits, discoveryFiles);
  };

  return async (request) => {
    const { role, angle } = request.task.row;
    const key = role === 'explorer' && angle ? angleKey(angle) : '';
    if (key === '') return execute(request);
    const earlier = exploring.get(key);
    if (earlier) await earlier;
    const reused = reuse(request);
    if (reused) return reused;
    const run = execute(request).then((reply): WorkerReply => {
      if (reply.kind !== 'finished' || reply.status !== 'completed') return reply;
      try {
        explorations.store(angle!, request.task.id, reply.findings);
      } catch (error) {
        // A cache the session folder cannot take (a full disk) stops the run like any write
        // that fails; the task is not to blame and stays pending (error class io).
        if (!isFolderWriteFailure(error)) throw error;
        return { kind: 'error', errorClass: 'io', error: `Cannot cache the exploration: ${(error as Error).message}` };
      }
      return reply;
    });
    const settled = run.catch(() => undefined);
    exploring.set(key, settled);
    void settled.then(() => {
      if (exploring.get(key) === settled) exploring.delete(key);
    });
    return run;
  };
}
