import type { TaskChanges } from '../core/session-changes.js';
import type { TaskRow } from '../core/task.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import type { SessionFileWriter } from '../layout.js';
import type { SessionConfig } from '../schema/session.js';

/**
 * What an interactive task changes in the session besides its own row: dynamic tasks
 * (DESIGN.md section 4: appended to tasks.csv, waves recomputed), rewired pending tasks, and
 * pending tasks it skips. The scheduling core's own type: it applies them at once, when the
 * task finishes.
 */
export type SessionChanges = TaskChanges;

export interface HandlerResult {
  reply: WorkerReply;
  changes?: SessionChanges;
  /** What the handler decided, for `interactive/<id>-result.json` (the lane writes the file). */
  record?: Record<string, unknown>;
}

/** A question of the discussion gate and its answer. */
export interface GateDecision {
  decision: 'continue' | 'adjust' | 'done';
  /** The new focus, for `adjust`. */
  focus?: string;
}

/** Where gate answers come from: a person at a terminal, an answers file, or --auto. */
export interface AnswerSource {
  /** Resolves with the decision, or rejects when no answer can be had (no TTY, no file, no --auto). */
  decide(question: string): Promise<GateDecision>;
  /**
   * A gate's answer as text (the quality gate's actions): `check` returns why it refuses a
   * text, or undefined. A terminal asks again after a refused text; a file's refused item
   * fails the gate, naming the file and the item. Rejects when no answer can be had.
   */
  answer?(question: string, choices: string, check: (text: string) => string | undefined): Promise<string>;
  /** Where the answers come from, as the run's output names it (`answers.json`, `--auto`, `the terminal`). */
  readonly source?: string;
  /** `--auto`: a gate with a rule of its own (the quality gate's threshold) decides by it. */
  readonly auto?: boolean;
  /** How far an answers file has been read, for the result file of each gate (a resume goes on from there). */
  position?(): AnswerPosition | undefined;
  /** Goes on after the answers the session's finished gates used (their recorded positions), if they were read from this same file. */
  resumeAfter?(positions: readonly unknown[]): void;
}

/** How far an answers file was read: its name, a digest of its bytes, and the next item. */
export interface AnswerPosition {
  file: string;
  sha256: string;
  next: number;
}

/** A gate's decision as the run tells it (`[GATE] DISCUSS-001: Continue deeper (from answers.json)`). */
export interface GateDecidedEvent {
  /** The task whose gate decided. */
  id: string;
  round: number;
  /** `Continue deeper`, `Adjust direction` or `Done`; the quality gate's action (`improve traceability`). */
  label: string;
  /** The new focus, for Adjust direction. */
  focus?: string;
  /** Where the answer came from: an AnswerSource's `source`, or the mode's round limit. */
  source: string;
}

export interface InteractiveContext {
  /** The session's rows as they stand (read only: change them through SessionChanges). */
  rows: readonly TaskRow[];
  config: SessionConfig;
  sessionDir: string;
  /** Writes the session's files (the discussion gate's discussion.md): a handler never writes the folder itself. */
  files: SessionFileWriter;
  /** Runs the task through the configured executor, as a csv-wave task would be. */
  runExecutor(request: WorkerRequest): Promise<WorkerReply>;
  answers: AnswerSource;
  /** Tells the run a gate's decision, once it is taken. */
  decided?: (event: GateDecidedEvent) => void;
  /**
   * The artifacts these tasks made (the session's artifact registry, seed 003), with their
   * validation status: what a gate validates. @default none
   */
  artifactsOf?: (taskIds: readonly string[]) => readonly { artifact_id: string; validation_status: string; task: string }[];
}

/** Runs the interactive tasks of one role (the GC controller, the discussion gate). */
export interface InteractiveHandler {
  run(request: WorkerRequest, context: InteractiveContext): Promise<HandlerResult>;
}
