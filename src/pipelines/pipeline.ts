import type { TaskRow } from '../core/task.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { InteractiveHandler } from '../interactive/types.js';
import type { GrammarSchema } from '../schema/grammar-schema.js';
import type { TaskResult } from '../schema/result.js';
import type { PipelineName } from '../schema/session.js';

/** How strictly a task's result is held to its pipeline's rules. */
export type ResultCheck =
  /** Any executor's result: what the pipeline can derive is filled in; nothing is refused. */
  | 'derive'
  /** A model's answer: what is missing or contradictory is refused, with a problem worded for a repair request. */
  | 'require';

/** A result as the pipeline's rules leave it, or why they refuse it. */
export type Normalised = { ok: true; result: TaskResult } | { ok: false; problem: string };

/**
 * What a model's answer for a role must give beyond every answer's `status` and `findings`:
 * JSON Schema properties that replace or add to the answer schema's own (a grammar makes a
 * constrained server give them), and which of them are required. What a schema cannot say
 * (numeric ranges, counts that must agree) is the role's result rule, in `require` mode.
 */
export interface RoleAnswerFields {
  properties: Readonly<Record<string, GrammarSchema>>;
  required: readonly string[];
}

/** What the engine lends a pipeline's attempt hook for one run. */
export interface AttemptHookContext {
  sessionDir: string;
  warn(message: string): void;
  /**
   * The reply for a raw result the hook produced itself instead of running the attempt,
   * finished as an executor's result is (validated, its files written).
   */
  finish(request: WorkerRequest, result: Record<string, unknown>): WorkerReply;
}

/** Runs one attempt: `run` is what the engine would do without the hook. */
export type AroundAttempt = (request: WorkerRequest, run: (request: WorkerRequest) => Promise<WorkerReply>) => Promise<WorkerReply>;

/**
 * What makes brainstorm, analyze and generic differ: everything else in the engine is
 * the same for all pipelines and names no role. Looked up with `pipelineFor(name)`.
 */
export interface Pipeline {
  readonly name: PipelineName;
  /** The roles validation accepts; null for any non-empty role. */
  readonly roles: ReadonlySet<string> | null;
  /** Interactive tasks of these roles are run by their handler in the main thread; others go through the executor. */
  readonly handlers: ReadonlyMap<string, InteractiveHandler>;
  /** The pipeline's rules for a finished result of a task of this role (the challenger's severity rule). */
  normaliseResult(role: string, result: TaskResult, check: ResultCheck): Normalised;
  /** Per role, what a model's answer must give (the model-answer contract); roles not here give the common fields only. */
  readonly answerFields: ReadonlyMap<string, RoleAnswerFields>;
  /**
   * The roles whose tasks are supervisor checkpoints: a model's answer for them must give
   * `supervision_verdict` (and may give `supervision_score`), which a `block` of stops
   * everything downstream. From a model's answer for any other role the two fields are
   * dropped with a warning: a model set `block` unasked.
   */
  readonly checkpointRoles: ReadonlySet<string>;
  /**
   * The rows `init` lays out for a new session. Each pipeline's plan (angles, perspectives,
   * a topic) is its own, so only the pipeline's own object can call it with its real type.
   */
  readonly decompose: (plan: never) => TaskRow[];
  /** Made once per run, then wraps every attempt the run makes; absent when attempts run as they are. */
  readonly aroundAttempt?: (context: AttemptHookContext) => AroundAttempt;
}
