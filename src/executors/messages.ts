/**
 * The messages that cross the worker-thread boundary, typed in one place (piscina
 * `src/types.ts` style). Everything here is structured-clone safe
 * (`WorkerRequest.started`, a MessagePort, is transferred). A WorkerReply crosses back as
 * JSON text (worker.ts `replyText`), which always arrives.
 */
import type { MessagePort } from 'node:worker_threads';
import type { DiscoveryInput } from '../schema/discovery.js';
import type { OutputMode, PipelineName } from '../schema/session.js';
import type { TaskResult } from '../schema/result.js';
import type { DiscoveryFilePolicy } from '../knowledge/discovery-files.js';
import type { PromptContext } from '../knowledge/prompt-context.js';
import type { DependencyState } from '../knowledge/upstream.js';
import type { ErrorClass, TaskInput, TokenUsage } from './types.js';

/** Which executor runs the task, and how it is set up. */
export type ExecutorSpec =
  /** `output`: how stdout becomes the result. @default 'auto' */
  | { type: 'command'; template: string; output?: OutputMode }
  /** `path`: a relative one is relative to the session folder (runSession resolves it). */
  | { type: 'module'; path: string }
  /** The API key is not here: workers read OPENAI_API_KEY from their environment, so it is never cloned or journaled. */
  | { type: 'openai'; model: string; baseUrl?: string; promptsDir?: string; maxTokens?: number };

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

export interface WorkerRequest {
  executor: ExecutorSpec;
  /** Which finished tasks get a discovery file. @default 'always' */
  discoveryFiles?: DiscoveryFilePolicy;
  /** Output caps of the run. @default the defaults of TaskLimits */
  limits?: TaskLimits;
  /** The session's pipeline, whose result rules the worker applies. @default 'generic' */
  pipeline?: PipelineName;
  /** The task without its upstream context, which the worker reads from disk. */
  task: Omit<TaskInput, 'upstream'>;
  deps: DependencyState[];
  /** For the openai executor: the session's prompt context, read by the engine (workers never read the session folder for it). */
  prompt?: PromptContext;
  timeoutMs: number;
  /**
   * Run on a thread that runs nothing else: set for the retry after a worker died under
   * the task, so that a task that kills its thread cannot take innocent tasks with it again.
   */
  isolated?: boolean;
  /**
   * Told when the worker takes the task up, so that the pool's deadline for a module task
   * does not count the time it sat in a queue. Transferred, not cloned.
   */
  started?: MessagePort;
}

/** The result of a finished attempt, validated and with its files written. */
export interface FinishedReply {
  kind: 'finished';
  status: 'completed' | 'failed';
  /** The findings cell: at most 500 characters, with a pointer when the whole is in artifacts. */
  findings: string;
  gc_signal: string;
  severity_summary: string;
  error: string;
  discoveries: DiscoveryInput[];
  wisdom: NonNullable<TaskResult['wisdom']>;
  /** Artifact paths written for this task, relative to the session folder. */
  artifacts: string[];
  supervision_verdict: TaskResult['supervision_verdict'];
  supervision_score: TaskResult['supervision_score'];
  usage?: TokenUsage;
  /**
   * Caps the task hit (its stdout, artifacts, findings, prev_context were cut or dropped),
   * one sentence each; the engine reports each as a warning.
   */
  notes?: string[];
}

/** An attempt that produced no result; the engine decides whether to retry it. */
export interface FailedAttemptReply {
  kind: 'error';
  errorClass: ErrorClass;
  error: string;
  retryAfterMs?: number;
  usage?: TokenUsage;
  /** Caps the attempt hit, as in FinishedReply. */
  notes?: string[];
}

/** The worker thread that ran the attempt (its threadId), when a worker answered. */
export type WorkerReply = (FinishedReply | FailedAttemptReply) & { thread?: number };
