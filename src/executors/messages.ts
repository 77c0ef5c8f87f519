/**
 * The messages of one attempt, typed in one place (piscina `src/types.ts` style).
 *
 * - WorkerRequest / WorkerReply: between the scheduler and the engine's attempt runner
 *   (run/task-runner.ts), on the main thread. The reply's files are written.
 * - AttemptRequest / AttemptReply: between the attempt runner and an execution backend
 *   (src/backend/), and on to the worker that runs the attempt. Plain JSON both ways, so
 *   that a backend may send them to another machine: the request carries everything the
 *   attempt needs and the reply everything it produced (artifact contents included);
 *   the worker neither reads nor writes the session folder. An AttemptReply crosses the
 *   thread boundary as JSON text (worker.ts `replyText`), which always arrives.
 */
import type { CoreFinishedReply } from '../core/effects.js';
import type { DiscoveryInput } from '../schema/discovery.js';
import type { OutputMode, PipelineName } from '../schema/session.js';
import type { AgentSpec } from './agents/settings.js';
import type { WorkdirPlan } from './workdir/workdir-plan.js';
import type { TaskResult } from '../schema/result.js';
import type { ArtifactManifest, ArtifactValidation } from '../schema/artifact-manifest.js';
import type { DiscoveryFileInput } from '../knowledge/discovery-files.js';
import type { PromptContext } from '../knowledge/prompt-context.js';
import type { DependencyState } from '../knowledge/upstream.js';
import type { ErrorClass, TaskInput, TokenUsage } from './types.js';
import type { RequestUsage } from '../knowledge/usage.js';


/** Which executor runs the task, and how it is set up. */
export type ExecutorSpec =
  /** `output`: how stdout becomes the result. @default 'auto' */
  | { type: 'command'; template: string; output?: OutputMode }
  /** `path`: a relative one is relative to the session folder (runSession resolves it). */
  | { type: 'module'; path: string }
  /** The API key is not here: workers read OPENAI_API_KEY from their environment, so it is never cloned or journaled. */
  | { type: 'openai'; model: string; baseUrl?: string; promptsDir?: string; maxTokens?: number; contextWindow?: number }
  /**
   * `codex exec` or `claude -p` per attempt (agents/settings.ts). `baseUrl`: a Responses-API
   * (codex) or Messages-API (claude) endpoint; without it the CLI's own configuration says
   * where. No key is here: the CLI reads it from the worker's environment.
   */
  | AgentSpec;

/**
 * Caps on what one task may produce, from RunOptions / session.json. Each cap a task hits
 * is reported (a note in its findings and in the reply). Absent fields take the defaults:
 * 1 MiB of stdout, 20 artifact files and 10 MiB of artifacts per task.
 */
export interface TaskLimits {
  /** Bytes of a command's stdout kept; the rest is read and dropped. */
  maxStdoutBytes?: number;
  /** Artifact files per task, the findings' own output file included. */
  maxArtifactsPerTask?: number;
  /** Bytes of artifact files per task, all together. */
  maxArtifactBytes?: number;
}

/** One attempt as the scheduler hands it out: the task, and its dependencies as they stand. */
export interface WorkerRequest {
  executor: ExecutorSpec;
  /** The task without its upstream context, which the attempt runner reads on the main thread. */
  task: Omit<TaskInput, 'upstream'>;
  deps: DependencyState[];
  timeoutMs: number;
  /**
   * Run on a thread that runs nothing else: set for the retry after a worker died under
   * the task, so that a task that kills its thread cannot take innocent tasks with it again.
   */
  isolated?: boolean;
}

/** What an execution backend runs: everything the attempt needs, as plain JSON. */
export interface AttemptRequest {
  executor: ExecutorSpec;
  /** The task with its upstream context, read by the engine. */
  task: TaskInput;
  /** For the openai executor: the session's prompt context, read by the engine. */
  prompt?: PromptContext;
  /** Output caps of the run. @default the defaults of TaskLimits */
  limits?: TaskLimits;
  /** The session's pipeline, whose result rules the worker applies. @default 'generic' */
  pipeline?: PipelineName;
  timeoutMs: number;
  /** As in WorkerRequest. */
  isolated?: boolean;
  /** For an agent executor: US dollars left of the run's --max-cost when the attempt was handed out. */
  maxBudgetUsd?: number;
  /** Where the task works when not in the session folder (`--workdir task|worktree`): made by the process that runs the attempt. */
  workdir?: WorkdirPlan;
}

/** An artifact file the attempt produced, for the engine to write as `artifacts/<task id>/<name>.md`. */
export interface ArtifactFile {
  name: string;
  content: string;
}

/**
 * A finished attempt as the worker returns it: validated, cleaned, scrubbed and within
 * its caps, its files not written yet. The findings cell already points at
 * `artifacts/<id>/output.md` when that file is among `artifacts`.
 */
export interface FinishedAttempt extends Omit<FinishedReply, 'artifacts'> {
  /** The files to write, in order (the findings' own output file first). */
  artifacts: ArtifactFile[];
  /** The task's discovery record (`discoveries/<id>.json`), written when the run's policy asks for it. */
  discovery: DiscoveryFileInput;
  /** The notes of the attempt without those of its files: what the reply keeps when its files cannot be written. */
  attemptNotes?: string[];
}

/**
 * Where an attempt ran beyond the reply itself: the worker thread that ran it (its
 * threadId), when a worker answered; and with --backend bullmq, the `csv-wave worker` of
 * another machine, from its signed reply.
 */
export interface AttemptPlace {
  thread?: number;
  worker?: RanOnWorker;
}

/**
 * The `csv-wave worker` that ran an attempt, as its signed reply tells it (--backend
 * bullmq): its host and pid, and the attempt's execution time by the worker's own
 * monotonic clock. No wall time of the worker's machine: the coordinator measures the
 * queue wait on its own clock (run/scheduler.ts).
 */
export interface RanOnWorker {
  host: string;
  pid: number;
  /** Milliseconds the attempt ran on the worker, from its start there to its reply. */
  ms: number;
}

export type AttemptReply = (FinishedAttempt | FailedAttemptReply) & AttemptPlace;

/** The result of a finished attempt, validated and with its files written (the scheduler's view). */
export interface FinishedReply extends CoreFinishedReply {
  discoveries: DiscoveryInput[];
  wisdom: NonNullable<TaskResult['wisdom']>;
  /** Artifact paths written for this task, relative to the session folder. */
  artifacts: string[];
  supervision_verdict: TaskResult['supervision_verdict'];
  supervision_score: TaskResult['supervision_score'];
  usage?: TokenUsage;
  /** The tokens of each model request of the attempt (usage.ndjson's lines). */
  requests?: RequestUsage[];
  /**
   * Caps the task hit (its stdout, artifacts, findings, prev_context were cut or dropped),
   * one sentence each; the engine reports each as a warning.
   */
  notes?: string[];
  /** The manifests of the artifacts the task made (artifact contracts); absent when none. */
  manifests?: ArtifactManifest[];
  /** Its verdicts on artifacts of the tasks upstream of it; absent when none. */
  validations?: ArtifactValidation[];
}

/**
 * A completed result's input key, recorded in its attempts.ndjson line so that `status` can
 * tell later whether its inputs changed (the cache entry of the key says what they were);
 * and whether it came from the cache.
 */
export interface CacheNote {
  /** The SHA-256 input key (cache/task-key.ts). */
  key: string;
  /** The key without the parts every later task changes (the board's and wisdom's digests); absent when it is `key`. */
  inputKey?: string;
  /** The result was taken from the cache: the task did not execute. */
  cached?: true;
  /** With `cached`: what the result cost when it was made, in US dollars, when known. */
  savedUsd?: number;
}

/** An attempt that produced no result; the engine decides whether to retry it. */
export interface FailedAttemptReply {
  kind: 'error';
  errorClass: ErrorClass;
  error: string;
  retryAfterMs?: number;
  usage?: TokenUsage;
  requests?: RequestUsage[];
  /** Caps the attempt hit, as in FinishedReply. */
  notes?: string[];
}

export type WorkerReply = (FinishedReply | FailedAttemptReply) & AttemptPlace;
