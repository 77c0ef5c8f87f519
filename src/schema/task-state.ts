import type { TaskRow } from '../core/task.js';
import type { TaskStatus } from './row.js';

/**
 * The error (prefix) a task is skipped with when a dependency failed (DESIGN.md section 5);
 * the full error names the root task, `Dependency failed or skipped: W2-04 (failed)`.
 */
export const kDependencyFailedError = 'Dependency failed or skipped';
/** The error (prefix) of a task skipped because a GC check converged: it satisfies its dependents. */
export const kGcConvergedError = 'Skipped: GC converged';
/** The error (prefix) of a task downstream of a supervisor checkpoint that said block. */
export const kBlockedPrefix = 'Blocked by checkpoint';

/** A row's status; an empty cell means pending. */
export function statusOf(row: TaskRow): TaskStatus {
  return row.status === '' ? 'pending' : (row.status as TaskStatus);
}

/** True when dependents of this task may run: it completed, or was skipped because a GC check converged. */
export function satisfiesDependents(row: TaskRow): boolean {
  const status = statusOf(row);
  return status === 'completed' || (status === 'skipped' && row.error.startsWith(kGcConvergedError));
}

/** Skipped because of a failure or a blocking checkpoint upstream: counts as a failure of the run. */
export function skippedForFailure(row: TaskRow): boolean {
  return statusOf(row) === 'skipped' && (row.error.startsWith(kDependencyFailedError) || row.error.startsWith(kBlockedPrefix));
}

/**
 * The error a dependent of this row is skipped with: the root cause travels down the
 * chain, so one failure does not leave 17 rows that only say "a dependency".
 */
export function dependencyFailedError(row: TaskRow): string {
  if (statusOf(row) === 'skipped' && row.error.startsWith(`${kDependencyFailedError}: `)) return row.error;
  return `${kDependencyFailedError}: ${row.id} (${statusOf(row)})`;
}
