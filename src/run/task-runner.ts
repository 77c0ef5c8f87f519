import type { ExecutionBackend } from '../backend/execution-backend.js';
import { isAgentKind } from '../executors/agents/settings.js';
import { finishAttempt } from '../executors/finish-attempt.js';
import type { AttemptReply, AttemptRequest, TaskLimits, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { workerErrorReply } from '../executors/worker-error.js';
import { buildPromptContext } from '../knowledge/prompt-context.js';
import type { SessionFileWriter } from '../layout.js';
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
}

/**
 * How a run executes one attempt of a task, on the main thread in front of the execution
 * backend: the request gets the task's upstream context (and a model prompt's view of the
 * session), read here so that no worker reads the session folder, the run's output caps
 * and the pipeline's name; the reply's files are written here (KnowledgeSink.attemptFiles)
 * before the reply reaches the scheduler, which records a findings cell that points at
 * them. The pipeline's attempt hook (the exploration cache) goes around it all.
 */
export function createTaskRunner(setup: TaskRunnerSetup): (request: WorkerRequest) => Promise<WorkerReply> {
  const { backend, sink, pipeline, limits, warn } = setup;

  // Not an async function: its suspended frame would hold the WorkerRequest and the
  // AttemptRequest until the reply comes; with 100,000 attempts queued on a remote backend
  // that is their rows twice over. The continuation keeps only the task's id and attempt.
  const execute = (request: WorkerRequest): Promise<WorkerReply> => {
    let attempt: AttemptRequest;
    try {
      attempt = attemptRequest(request);
    } catch (error) {
      // A context that cannot be read is a worker error, as it was when workers read it:
      // the scheduler's rules for that class (one retry, on a thread of its own) are kept.
      return Promise.resolve(workerErrorReply(error));
    }
    const { id, attempt: number } = request.task;
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
      return sink.attemptFiles(id, reply);
    });
  };

  /** Everything the attempt needs, read here on the main thread: workers do not read the session folder. */
  const attemptRequest = (request: WorkerRequest): AttemptRequest => {
    const { executor, task, timeoutMs } = request;
    const upstream = withChanges(sink.upstream(request.deps), setup.workdir);
    const attempt: AttemptRequest = { executor, task: { ...task, upstream }, limits, pipeline: pipeline.name, timeoutMs };
    if (request.isolated) attempt.isolated = true;
    const workdir = workdirPlan(setup.workdir, setup.files.dir, task.id);
    if (workdir !== undefined) attempt.workdir = workdir;
    if (executor.type === 'openai' || isAgentKind(executor.type)) {
      attempt.prompt = buildPromptContext(setup.files.dir, { pipeline: pipeline.name, topic: setup.topic }, upstream);
    }
    // An agent row may name another agent than the run's: each takes the budget it can use.
    const left = isAgentKind(executor.type) ? setup.budgetLeftUsd?.() : undefined;
    if (left !== undefined) attempt.maxBudgetUsd = left;
    return attempt;
  };

  const around = pipeline.aroundAttempt?.({
    files: setup.files,
    warn,
    finish: (request, result) =>
      sink.attemptFiles(request.task.id, finishAttempt(request.task, { kind: 'result', result }, limits, pipeline.name)),
  });
  return around ? (request) => around(request, execute) : execute;
}
