/**
 * When to stop starting tasks because too many failed (like GNU parallel's --halt soon,fail=N):
 * once this many (or this percent of the run's tasks) failed for non-transient reasons.
 */
export type HaltPolicy = { count: number } | { percent: number };

import type { GateState } from './gates.js';
import type { BranchOf } from './routing.js';
import type { TaskRow } from './task.js';

/** How the core schedules; time and randomness come in here, never from the platform. */
export interface CoreOptions {
  schedule: 'waves' | 'eager';
  /** csv-wave tasks running at once; the interactive lane runs one more, on its own. */
  concurrency: number;
  /** Retries of an attempt whose error class is in `retryable`. */
  retries: number;
  retryBaseMs: number;
  halt: HaltPolicy | undefined;
  /** Error classes retried with a backoff (rate-limited, transient, timeout). */
  retryable: ReadonlySet<string>;
  /** A number in [0, 1), for the backoff's jitter. */
  random: () => number;
  /** The branches a task is on, for routing (core/routing.ts). @default its `branch` cell */
  branchOf?: BranchOf;
  /**
   * Whether a task validates its dependencies' artifacts: it starts while their gate is
   * closed (core/gates.ts). @default no task does
   */
  validates?: (row: TaskRow) => boolean;
  /** The gates of tasks that made artifacts before this run (artifact-registry.json); a task absent here has passed. @default none */
  gates?: ReadonlyMap<string, GateState>;
}
