import type { FinalStatus, TaskRow } from './task.js';
import type { StopReason } from './stop-reason.js';
import type { TaskUpdate } from './session-changes.js';

/** What the core needs of a finished attempt: the cells it records (the engine's FinishedReply extends it). */
export interface CoreFinishedReply {
  kind: 'finished';
  status: 'completed' | 'failed';
  /** The findings cell: at most 500 characters, with a pointer when the whole is in artifacts. */
  findings: string;
  gc_signal: string;
  severity_summary: string;
  error: string;
  /** A supervisor checkpoint's verdict: 'block' skips everything downstream. */
  supervision_verdict?: string | null | undefined;
  /** The branch a routing task chose (core/routing.ts): its dependents on other branches are skipped. */
  route?: string | undefined;
}

/** What the core needs of an attempt's reply (the engine's WorkerReply is one). */
export type CoreReply = CoreFinishedReply | { kind: 'error'; errorClass: string; error: string; retryAfterMs?: number | undefined };

/** The reply the core makes itself when an interactive task's change is refused. */
export interface RefusedChange {
  kind: 'error';
  errorClass: 'task-failure';
  error: string;
}

/**
 * What the core asks its driver to do, in the order given. The driver performs each one
 * before asking for the next, so that an event it feeds back meanwhile (a stop from a
 * listener) is seen by the rest, as when the scheduler emitted events itself.
 */
export type Effect<R extends CoreReply = CoreReply> =
  /** Emit `wave:start` (schedule `waves`: the gate reached the wave, or passed over it). */
  | { type: 'wave-start'; wave: number; tasks: number }
  /** Write `wave-<N>.csv`: the wave is about to run (waves) or all its tasks started (eager). */
  | { type: 'wave-file'; wave: number }
  /** Emit `task:start` and hand the attempt to the pool (or the interactive lane); answer with `settled`. */
  | { type: 'dispatch'; row: TaskRow; wave: number; attempt: number; interactive: boolean; isolated: boolean }
  /** Emit `task:retry` and answer with `retryDue` after `delayMs`; `reply` is the attempt's error (kind 'error'). */
  | { type: 'retry'; id: string; attempt: number; reply: R; delayMs: number }
  /** The retry planned for this task will not happen: drop its timer. */
  | { type: 'cancel-retry'; id: string }
  /** The task is finished (its row holds the outcome): record its knowledge, emit `task:done`. */
  | {
      type: 'finished';
      row: TaskRow;
      wave: number;
      status: FinalStatus;
      reply: R | undefined;
      attempts: number;
      /** The pending tasks its result skips (a converged GC check), each finished as skipped right after: recorded with it, so that a kill between cannot lose them. */
      skips?: readonly { id: string; error: string }[];
    }
  /** Emit `wave:done`: the wave and every wave before it have no unfinished task. */
  | { type: 'wave-done'; wave: number; completed: number; failed: number; skipped: number }
  /** Emit `tasks:changed`: an interactive task added or rewired tasks, or an edit of tasks.csv added, changed or removed some. */
  | {
      type: 'tasks-changed';
      /** Who made the change: an interactive task of the run, or a person's edit of tasks.csv. */
      by: 'task' | 'edit';
      added: TaskRow[];
      updated: TaskUpdate[];
      /** Tasks an edit removed (never started). */
      removed: string[];
      /** The deps and context_from the updated tasks had before (by a task), so that a save that still shows them is seen as older. */
      previous: { id: string; deps: string; context_from: string }[];
      waveCount: number;
    }
  /**
   * Nothing out, and the gate is about to move (schedule `waves`) or the run to end: the
   * driver may feed an edit of tasks.csv now (`edit`), before anything more starts.
   */
  | { type: 'edit-point' }
  /** Nothing is out and nothing more can start: the run is over. */
  | { type: 'run-done'; stopped: StopReason | undefined; reason: string };

/** The effects about waves alone. */
export type WaveEffect = Extract<Effect, { type: 'wave-start' | 'wave-file' | 'wave-done' }>;
