/** Everything a task receives: on stdin for commands, as the first argument for modules (schema/task-input.ts). */
export type { TaskInput } from '../schema/task-input.js';
import type { PromptContext } from '../knowledge/prompt-context.js';
import type { RequestUsage } from '../knowledge/usage.js';
import type { TaskInput } from '../schema/task-input.js';

/**
 * Why a task attempt failed; the engine retries the first three by default
 * (DESIGN.md section 5).
 */
export type ErrorClass =
  /** The service said slow down (HTTP 429); retried after Retry-After or a backoff. */
  | 'rate-limited'
  /** Network trouble, HTTP 5xx, or a command that exited 75 (EX_TEMPFAIL); retried. */
  | 'transient'
  /** The attempt ran past --timeout and was killed; retried. */
  | 'timeout'
  /** The executor returned something that is not a valid result; not retried. */
  | 'invalid-output'
  /** The task itself failed (non-zero exit, a thrown error, status failed); not retried. */
  | 'task-failure'
  /** The worker thread died under the task (process.exit, out of memory); not retried. */
  | 'worker-crash'
  /**
   * The task's own files (artifacts, discovery file, exploration cache) could not be
   * written into the session folder (a full disk, a read-only folder): the folder is at
   * fault, not the task. Never retried nor counted as a failure: the task goes back to
   * pending and the run stops as for any failed write (the `io` stop reason).
   */
  | 'io';

export const kRetryableClasses: ReadonlySet<ErrorClass> = new Set(['rate-limited', 'transient', 'timeout']);

/** Tokens a model call spent; recorded per task in usage.ndjson. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What one attempt produced: a raw result (validated by the caller), or a classified
 * failure. `notes` say which caps the output hit (stdout cut, …): they end the findings
 * and are reported as warnings. A model call's `requests` are its requests' tokens, one
 * each (usage.ndjson's lines); `usage` is their sum, for the attempts log.
 */
export type AttemptOutcome = (
  | { kind: 'result'; result: unknown }
  | { kind: 'error'; errorClass: ErrorClass; error: string; retryAfterMs?: number }
) & { usage?: TokenUsage; requests?: RequestUsage[]; notes?: string[] };

export interface ExecutorRunOptions {
  signal: AbortSignal;
  /** Milliseconds before the attempt is killed; 0 for none. */
  timeoutMs: number;
  /** Bytes of a command's stdout kept (the run's `maxStdoutBytes`). @default the executor's own, 1 MiB */
  maxStdoutBytes?: number;
  /** What a model prompt shows of the session (the openai executor needs it; others ignore it). */
  prompt?: PromptContext;
  /**
   * Told each model request's tokens as soon as the server's answer arrives, before the
   * attempt ends: an attempt cancelled later (its thread ended) still gets them counted.
   * The reply's `requests` list them all again; the engine writes each once.
   */
  reportUsage?: (request: RequestUsage) => void;
  /** Where an agent works (its `-C`, its cwd): a task's own folder or git worktree. @default the session folder */
  workdir?: string;
  /** US dollars an agent attempt may still spend: what is left of the run's --max-cost (claude's `--max-budget-usd`). @default no limit */
  maxBudgetUsd?: number;
}

/** The one small interface every executor implements (tinypool `runtime/` style). */
export interface Executor {
  run(task: TaskInput, options: ExecutorRunOptions): Promise<AttemptOutcome>;
}
