import type { ExecutionBackend } from '../backend/execution-backend.js';
import { attemptInput, type AttemptInputSetup } from '../cache/attempt-input.js';
import type { CachePlan, ResultCache } from '../cache/result-cache.js';
import { finishAttempt } from '../executors/finish-attempt.js';
import type { AttemptReply, AttemptRequest, TaskLimits, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { workerErrorReply } from '../executors/worker-error.js';
import type { SessionFileWriter } from '../layout.js';
import { WaveDigests } from '../knowledge/prompt-context.js';
import type { Pipeline } from '../pipelines/pipeline.js';
import type { KnowledgeSink } from './record/knowledge-sink.js';
import { withChanges, workdirPlan, type RunWorkdir } from './workdir/workdir-setup.js';

export interface TaskRunnerSetup {
  backend: ExecutionBackend;
  /** Writes each finished attempt's files before its reply goes on. */
  sink: Pick<KnowledgeSink, 'attemptFiles' | 'upstream'> & Partial<Pick<KnowledgeSink, 'attemptUsage'>>;
  /** The session's pipeline: its attempt hook wraps every attempt, and workers apply its result rules. */
  pipeline: Pipeline;
  limits: TaskLimits;
  warn: (message: string) => void;
  /** The session's writer: the pipeline's hook writes through it, and the prompt context is read from its folder. */
  files: SessionFileWriter;
  /** The session's topic, for model prompts. */
  topic: string;
  /** US dollars left of the run's --max-cost (Budget.leftUsd): an agent attempt may spend no more. */
  budgetLeftUsd?: () => number | undefined;
  /** Where tasks work when not in the session folder (--workdir task|worktree). @default the session folder */
  workdir?: RunWorkdir;
  /** The result cache (docs/cache.md): looked up before an attempt is sent, written after. @default none */
  cache?: ResultCache;
}

/** Runs one attempt; `uncached` runs it without the result cache (the interactive lane's tasks). */
export type TaskRunnerFn = ((request: WorkerRequest) => Promise<WorkerReply>) & { uncached: (request: WorkerRequest) => Promise<WorkerReply> };

/**
 * How a run executes one attempt of a task, on the main thread in front of the execution
 * backend: the request gets the task's upstream context (and a model prompt's view of the
 * session), read here so that no worker reads the session folder, the run's output caps
 * and the pipeline's name (cache/attempt-input.ts); the result cache is asked with the
 * request's key before the backend gets it, and told the completed result after; the
 * reply's files are written here (KnowledgeSink.attemptFiles) before the reply reaches the
 * scheduler, which records a findings cell that points at them. A cached result takes the
 * same way as an executed one, with nothing spent. The pipeline's attempt hook (the
 * exploration cache) goes around it all.
 */
export function createTaskRunner(setup: TaskRunnerSetup): TaskRunnerFn {
  const { backend, sink, pipeline, limits, warn, cache } = setup;
  const input: AttemptInputSetup = {
    sessionDir: setup.files.dir,
    pipeline: pipeline.name,
    topic: setup.topic,
    limits,
    digests: new WaveDigests(),
    upstream: (deps) => withChanges(sink.upstream(deps), setup.workdir),
    ...(setup.workdir === undefined ? {} : { workdir: (id: string) => workdirPlan(setup.workdir, setup.files.dir, id) }),
    ...(setup.budgetLeftUsd === undefined ? {} : { budgetLeftUsd: setup.budgetLeftUsd }),
  };

  // Not an async function: its suspended frame would hold the WorkerRequest and the
  // AttemptRequest until the reply comes; with 100,000 attempts queued on a remote backend
  // that is their rows twice over. The continuation keeps only the task's id and attempt.
  const execute = (request: WorkerRequest, cached: boolean): Promise<WorkerReply> => {
    let attempt: AttemptRequest;
    try {
      attempt = attemptInput(request, input);
    } catch (error) {
      // A context that cannot be read is a worker error, as it was when workers read it:
      // the scheduler's rules for that class (one retry, on a thread of its own) are kept.
      return Promise.resolve(workerErrorReply(error));
    }
    const { id, attempt: number } = request.task;
    const plan = cached && cache !== undefined ? planOf(cache, attempt, warn) : undefined;
    if (plan !== undefined) {
      const hit = cache!.lookup(plan, attempt);
      if (hit !== undefined) {
        const reply = sink.attemptFiles(id, hit.reply);
        if (completed(reply)) cache!.remember(id, plan, hit);
        // Answered on a later turn of the event loop: a run whose tasks all come from the
        // cache still hears signals and writes its checkpoints as it goes.
        return new Promise((resolve) => setImmediate(() => resolve(reply)));
      }
    }
    // No signal: no single attempt is aborted, a run that stops takes its tasks back and
    // cancels them all at once (ExecutionBackend.cancelAll). Every attempt's tokens count,
    // the retried and the refused ones too: as early as the backend tells the reply.
    let counted = false;
    const count = (reply: AttemptReply) => {
      counted = true;
      sink.attemptUsage?.(id, number, reply);
    };
    return backend.submit(attempt, undefined, count).then((reply) => {
      if (!counted) count(reply);
      if (plan !== undefined) cache!.store(plan, id, reply);
      const written = sink.attemptFiles(id, reply);
      if (plan !== undefined && completed(written)) cache!.remember(id, plan);
      return written;
    });
  };

  const around = pipeline.aroundAttempt?.({
    files: setup.files,
    warn,
    finish: (request, result) =>
      sink.attemptFiles(request.task.id, finishAttempt(request.task, { kind: 'result', result }, limits, pipeline.name)),
  });
  const run = (cached: boolean) => (request: WorkerRequest) => (around ? around(request, (given) => execute(given, cached)) : execute(request, cached));
  return Object.assign(run(true), { uncached: run(false) });
}

/** The attempt's cache plan; a key that cannot be made is said, and the attempt runs without the cache. */
function planOf(cache: ResultCache, attempt: AttemptRequest, warn: (message: string) => void): CachePlan | undefined {
  try {
    return cache.plan(attempt);
  } catch (error) {
    warn(`cache: no key for ${attempt.task.id} (${error instanceof Error ? error.message : String(error)}): it runs without the cache`);
    return undefined;
  }
}

function completed(reply: WorkerReply): boolean {
  return reply.kind === 'finished' && reply.status === 'completed';
}
