import { kTaskColumns, type SeedColumn, type TaskRow } from '../core/task.js';
import type { SessionFileWriter } from '../layout.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { InteractiveHandler } from '../interactive/types.js';
import type { RoleRules } from '../roles/role-rules.js';
import type { InjectionRule, PipelineName } from '../schema/session.js';
import type { PipelineSettings, SettingsReader } from './settings.js';

/** What the engine lends a pipeline's attempt hook for one run. */
export interface AttemptHookContext {
  /** The session's writer: a hook never writes the folder itself. */
  files: SessionFileWriter;
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
 * the same for all pipelines and names no role. Looked up with `pipelineFor(name)`. Its
 * role rules (roles/role-rules.ts) sit below the executors, which apply them.
 */
export interface Pipeline extends RoleRules {
  readonly name: PipelineName;
  /** The columns its tasks.csv must have, and those a run adds when the file lacks them (the cells it writes). */
  readonly columns: PipelineColumns;
  /** Interactive tasks of these roles are run by their handler in the main thread; others go through the executor. */
  readonly handlers: ReadonlyMap<string, InteractiveHandler>;
  /**
   * The rows `init` lays out for a new session. Each pipeline's plan (angles, perspectives,
   * a topic) is its own, so only the pipeline's own object can call it with its real type.
   */
  readonly decompose: (plan: never) => TaskRow[];
  /** Its settings (topic, mode, max_gc_rounds), typed, read from init's flags or session.json; a bad value is refused naming its flag or key. */
  readonly settings: (reader: SettingsReader) => PipelineSettings;
  /** Made once per run, then wraps every attempt the run makes; absent when attempts run as they are. */
  readonly aroundAttempt?: (context: AttemptHookContext) => AroundAttempt;
  /** The branches a task is on when its `branch` cell is empty (conditional routing). @default none */
  readonly branchOf?: (row: TaskRow) => readonly string[];
  /** The roles whose tasks validate artifacts, when session.json's `validator_roles` names none. @default none */
  readonly validatorRoles?: readonly string[];
  /** The injection rules when session.json has no `inject` (the lifecycle's: the seed's table). @default none */
  readonly injectionRules?: readonly InjectionRule[];
}

/** What a pipeline asks of tasks.csv's columns. */
export interface PipelineColumns {
  /** Without one of these no task can be understood: the file is refused at its header, and an empty cell at its row. */
  readonly required: readonly SeedColumn[];
  /** Added by `plan` and a run when the file lacks them, in the seed's order, after the file's own columns. */
  readonly written: readonly SeedColumn[];
}

/** A pipeline of the seeds: every task has a description and a role, and the file every seed column. */
export const kSeedPipelineColumns: PipelineColumns = { required: ['id', 'description', 'role'], written: kTaskColumns };
