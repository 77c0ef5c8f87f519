import type { TaskRow } from '../task.js';
import type { SkipCause } from '../skip-cause.js';
import type { TaskState } from './task-state.js';

/** One task of this run and where it stands. */
export interface Entry {
  row: TaskRow;
  index: number;
  wave: number;
  /** 0 for P0, 1 for P1 (or none), 2 for P2: the ready queues' order, then `index`. */
  rank: number;
  state: TaskState;
  /** Dependencies and context sources of this run not finished yet. */
  remaining: number;
  /** Tasks of this run waiting on this one. */
  dependents: Entry[];
  /** Why it is skipped instead of started once it waits on nothing (a failure, a block, a change). */
  pendingSkip: SkipCause | undefined;
  /**
   * Where the dependency that gave `pendingSkip` sits in the deps column (-1 for a skip an
   * interactive task asked for): of several failed dependencies the first named wins, so
   * the error does not depend on which finished first (waves and eager agree).
   */
  pendingSkipRank: number;
  /** Attempts started; 0 while it never started. */
  attempts: number;
  /** Its one retry after a worker crash was used; that retry runs on a thread of its own. */
  crashRetried: boolean;
}

const kPriorityRank: Record<string, number> = { P0: 0, P1: 1, '': 1, P2: 2 };

/** The ready queues' rank of a priority cell (P1 for an empty or unknown one). */
export function rankOf(priority: string): number {
  return kPriorityRank[priority] ?? 1;
}

/** A task of the run that has not started and waits on nothing yet (the core wires it). */
export function newEntry(row: TaskRow, index: number, wave: number): Entry {
  return {
    row,
    index,
    wave,
    rank: rankOf(row.priority),
    state: 'waiting',
    remaining: 0,
    dependents: [],
    pendingSkip: undefined,
    pendingSkipRank: 0,
    attempts: 0,
    crashRetried: false,
  };
}

/** Marks a task to be skipped, unless a dependency named before this one already did. */
export function doom(entry: Entry, cause: SkipCause, rank: number): void {
  if (entry.pendingSkip && entry.pendingSkipRank <= rank) return;
  entry.pendingSkip = cause;
  entry.pendingSkipRank = rank;
}
