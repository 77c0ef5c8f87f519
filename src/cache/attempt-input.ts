import { isAgentKind } from '../executors/agents/settings.js';
import type { AttemptRequest, TaskLimits, WorkerRequest } from '../executors/messages.js';
import type { WorkdirPlan } from '../executors/workdir/workdir-plan.js';
import { buildPromptContext, type WaveDigests } from '../knowledge/prompt-context.js';
import type { DependencyState, UpstreamContext } from '../knowledge/upstream.js';
import type { PipelineName } from '../schema/session.js';

/** What the attempts of a run (or of status's offline keys) share. */
export interface AttemptInputSetup {
  sessionDir: string;
  pipeline: PipelineName;
  /** The session's topic, for model prompts. */
  topic: string;
  limits: TaskLimits;
  /** The dependencies as the task sees them: the run's KnowledgeSink.upstream (with their worktrees' changes), or buildUpstream. */
  upstream: (deps: readonly DependencyState[]) => UpstreamContext;
  /** Where a task works when not in the session folder (--workdir task|worktree). @default the session folder */
  workdir?: (taskId: string) => WorkdirPlan | undefined;
  /** US dollars left of the run's --max-cost (an agent attempt may spend no more). */
  budgetLeftUsd?: () => number | undefined;
  /**
   * Without the digests of the prompt context (the board, the dependencies' outputs, the
   * wisdom): for keys whose ambient parts do not matter (status's stale tasks), which then
   * read no board for each task. The input key is the same; the key is not.
   * @default false
   */
  noDigests?: boolean;
  /**
   * The run's snapshots of the shared digests, one per wave: the tasks of a wave show the
   * same board and wisdom. @default each attempt reads them as they stand (status's keys)
   */
  digests?: WaveDigests;
}

/**
 * Everything an attempt needs, read on the main thread (workers do not read the session
 * folder): the task with its upstream context, and for a model or agent call the prompt
 * context. The run sends it to its backend; the result cache keys it (task-key.ts); status
 * builds the same from the session as it stands (session-keys.ts), so that a key computed
 * now is the key a run would compute.
 */
export function attemptInput(request: WorkerRequest, setup: AttemptInputSetup): AttemptRequest {
  const { executor, task, timeoutMs } = request;
  const upstream = setup.upstream(request.deps);
  const attempt: AttemptRequest = { executor, task: { ...task, upstream }, limits: setup.limits, pipeline: setup.pipeline, timeoutMs };
  if (request.isolated) attempt.isolated = true;
  const workdir = setup.workdir?.(task.id);
  if (workdir !== undefined) attempt.workdir = workdir;
  if (executor.type === 'openai' || isAgentKind(executor.type)) {
    attempt.prompt =
      setup.noDigests === true
        ? { pipeline: setup.pipeline, topic: setup.topic, discoveries: '', upstream: '', wisdom: '' }
        : buildPromptContext(
            setup.sessionDir,
            { pipeline: setup.pipeline, topic: setup.topic },
            upstream,
            setup.digests === undefined ? undefined : { number: task.wave, digests: setup.digests },
          );
  }
  // An agent row may name another agent than the run's: each takes the budget it can use.
  const left = isAgentKind(executor.type) ? setup.budgetLeftUsd?.() : undefined;
  if (left !== undefined) attempt.maxBudgetUsd = left;
  return attempt;
}
