import type { ExecutionBackend } from '../backend/execution-backend.js';
import { isFolderWriteFailure } from '../csv/write-all.js';
import { cleanText } from '../executors/clean-text.js';
import { finishAttempt } from '../executors/finish-attempt.js';
import { describe } from '../executors/module.js';
import { scrubSecrets } from '../executors/secret-scrubber.js';
import type { AttemptRequest, TaskLimits, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { angleKey, type ExplorationCache } from '../knowledge/exploration-cache.js';
import { buildPromptContext } from '../knowledge/prompt-context.js';
import { buildUpstream } from '../knowledge/upstream.js';
import type { KnowledgeSink } from './knowledge-sink.js';

export interface TaskRunnerSetup {
  backend: ExecutionBackend;
  /** Writes each finished attempt's files before its reply goes on. */
  sink: Pick<KnowledgeSink, 'attemptFiles'>;
  explorations: ExplorationCache;
  limits: TaskLimits;
  warn: (message: string) => void;
  /** The session folder, which the request's upstream context is read from. */
  sessionDir: string;
  /** The session as model prompts show it; undefined when the executor makes no model calls. */
  prompts: { pipeline: string; topic: string } | undefined;
}

/**
 * No single attempt is aborted: a run that stops takes its tasks back and cancels them
 * all at once (ExecutionBackend.cancelAll).
 */
const kNeverAborted = new AbortController().signal;

/**
 * How a run executes one attempt of a task, on the main thread in front of the execution
 * backend: the request gets the task's upstream context (and a model prompt's view of the
 * session), read here so that no worker reads the session folder, and the run's output
 * caps; the reply's files are written here (KnowledgeSink.attemptFiles) before the reply
 * reaches the scheduler, which records a findings cell that points at them. An explorer
 * whose angle was explored before in the session reuses that result (seed 000) — also
 * when the first exploration of the angle is still running, which it then waits for.
 * The engine's main thread is the cache's only writer.
 */
export function createTaskRunner(setup: TaskRunnerSetup): (request: WorkerRequest) => Promise<WorkerReply> {
  const { backend, sink, explorations, limits, warn } = setup;
  const exploring = new Map<string, Promise<unknown>>();

  const execute = async (request: WorkerRequest): Promise<WorkerReply> => {
    let attempt: AttemptRequest;
    try {
      attempt = attemptRequest(request);
    } catch (error) {
      // Read by the worker before this moved here, and answered the same way.
      return { kind: 'error', errorClass: 'worker-crash', error: scrubSecrets(cleanText(`Worker error: ${describe(error)}`)) };
    }
    return sink.attemptFiles(request.task.id, await backend.submit(attempt, kNeverAborted));
  };

  /** Everything the attempt needs, read here on the main thread: workers do not read the session folder. */
  const attemptRequest = (request: WorkerRequest): AttemptRequest => {
    const { deps, task, ...rest } = request;
    const upstream = buildUpstream(setup.sessionDir, deps);
    const prompts = setup.prompts;
    const prompt =
      prompts === undefined || request.executor.type !== 'openai' ? {} : { prompt: buildPromptContext(setup.sessionDir, prompts, upstream) };
    return { ...rest, task: { ...task, upstream }, limits, ...prompt };
  };

  const reuse = (request: WorkerRequest): WorkerReply | undefined => {
    const cached = explorations.lookup(request.task.row.angle ?? '');
    // A task run again (a rerun) explores anew rather than reading back its own result.
    if (!cached || cached.createdBy === request.task.id) return undefined;
    warn(`${request.task.id} reused the exploration of ${cached.createdBy} (angle ${request.task.row.angle})`);
    return sink.attemptFiles(request.task.id, finishAttempt(request.task, { kind: 'result', result: { findings: cached.findings } }, limits));
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
