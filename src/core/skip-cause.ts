import type { TaskRow } from './task.js';
import type { TaskStatus } from '../schema/row.js';

/**
 * Why a task was skipped. In memory the cause is typed; tasks.csv keeps only its error
 * text (the file contract), so this file is the one place that writes that text and the
 * one place that reads a cause back from a row loaded from disk.
 */
export type SkipKind =
  /** A dependency failed or was skipped for a failure: the run failed (exit code 1). */
  | 'dependency'
  /** Downstream of a supervisor checkpoint that said block: the run failed. */
  | 'blocked'
  /** A GC check converged: a success, and its dependents still run. */
  | 'converged'
  /** A discussion gate decided anew and dropped this follow-up: its dependents are skipped. */
  | 'superseded'
  /** A routing dependency chose another branch than this task's: a success, and its dependents still run. */
  | 'not-chosen'
  /** An artifact it waited on failed validation, and no fix round is left: the run failed. */
  | 'rejected'
  /** Any other skip (set by hand, or by an older version): no failure, dependents are skipped. */
  | 'other';

export interface SkipCause {
  readonly kind: SkipKind;
  /** The task the cause names: the root failure, the checkpoint, the GC check, the gate; '' when the text names none. */
  readonly source: string;
  /** The error cell, exactly as written to tasks.csv. */
  readonly error: string;
}

/** The error (prefix) of a task skipped because a dependency failed (DESIGN.md section 5). */
export const kDependencyFailedError = 'Dependency failed or skipped';
/** The error (prefix) of a task skipped because a GC check converged. */
export const kGcConvergedError = 'Skipped: GC converged';
/** The error (prefix) of a task downstream of a supervisor checkpoint that said block. */
export const kBlockedPrefix = 'Blocked by checkpoint';
/** The error (prefix) of a follow-up dropped by a new decision of a discussion gate. */
export const kSupersededPrefix = 'Skipped: superseded by a new decision of';
/** The error (prefix) of a task on a branch its routing dependency did not choose. */
export const kNotChosenPrefix = 'Skipped: not chosen';
/** The error (prefix) of a task whose upstream artifact failed validation with no fix round left. */
export const kRejectedPrefix = 'Blocked by artifact';

/** `Dependency failed or skipped: W2-04 (failed)`: the root task and how it ended. */
export function dependencyCause(root: string, status: TaskStatus): SkipCause {
  return { kind: 'dependency', source: root, error: `${kDependencyFailedError}: ${root} (${status})` };
}

/** `Blocked by checkpoint S1: <its findings, one line, at most 120 characters>`. */
export function blockedCause(checkpoint: string, findings: string): SkipCause {
  const why = findings.replace(/\s+/g, ' ').trim().slice(0, 120);
  return { kind: 'blocked', source: checkpoint, error: `${kBlockedPrefix} ${checkpoint}${why === '' ? '' : `: ${why}`}` };
}

/** `Skipped: GC converged (CHECK-1)`. */
export function convergedCause(check: string): SkipCause {
  return { kind: 'converged', source: check, error: `${kGcConvergedError} (${check})` };
}

/** `Skipped: superseded by a new decision of D1`. */
export function supersededCause(gate: string): SkipCause {
  return { kind: 'superseded', source: gate, error: `${kSupersededPrefix} ${gate}` };
}

/** `Skipped: not chosen (PLAN-001: direct)`: the routing task, and the branch it chose. */
export function notChosenCause(router: string, route: string): SkipCause {
  return { kind: 'not-chosen', source: router, error: `${kNotChosenPrefix} (${router}: ${route})` };
}

/**
 * `Blocked by artifact prd of DRAFT-002: <the validation summary, one line, at most 120
 * characters>`: the artifact that failed validation, and the task that made it.
 */
export function rejectedCause(artifact: string, producer: string, summary: string): SkipCause {
  const why = summary.replace(/\s+/g, ' ').trim().slice(0, 120);
  return { kind: 'rejected', source: producer, error: `${kRejectedPrefix} ${artifact} of ${producer}${why === '' ? '' : `: ${why}`}` };
}

/** The cause an error text names (the decoder: by prefix, as every version wrote them). */
export function parseSkipCause(error: string): SkipCause {
  if (error.startsWith(kDependencyFailedError)) {
    return { kind: 'dependency', source: /^: (\S+) \(/.exec(error.slice(kDependencyFailedError.length))?.[1] ?? '', error };
  }
  if (error.startsWith(kBlockedPrefix)) {
    return { kind: 'blocked', source: /^ ([^\s:]+)(?::|$)/.exec(error.slice(kBlockedPrefix.length))?.[1] ?? '', error };
  }
  if (error.startsWith(kGcConvergedError)) {
    return { kind: 'converged', source: /^ \((\S+)\)$/.exec(error.slice(kGcConvergedError.length))?.[1] ?? '', error };
  }
  if (error.startsWith(kSupersededPrefix)) {
    return { kind: 'superseded', source: /^ (\S+)$/.exec(error.slice(kSupersededPrefix.length))?.[1] ?? '', error };
  }
  if (error.startsWith(kNotChosenPrefix)) {
    return { kind: 'not-chosen', source: /^ \((\S+): \S+\)$/.exec(error.slice(kNotChosenPrefix.length))?.[1] ?? '', error };
  }
  if (error.startsWith(kRejectedPrefix)) {
    return { kind: 'rejected', source: /^ \S+ of ([^\s:]+)(?::|$)/.exec(error.slice(kRejectedPrefix.length))?.[1] ?? '', error };
  }
  return { kind: 'other', source: '', error };
}

/** A row's status; an empty cell means pending. */
export function statusOf(row: TaskRow): TaskStatus {
  return row.status === '' ? 'pending' : (row.status as TaskStatus);
}

/** Why this row was skipped, or undefined when it was not. */
export function skipCauseOf(row: TaskRow): SkipCause | undefined {
  return statusOf(row) === 'skipped' ? parseSkipCause(row.error) : undefined;
}

/**
 * True when dependents of this task may run: it completed, or was skipped because a GC
 * check converged or a routing task chose another branch (both successes).
 */
export function satisfiesDependents(row: TaskRow): boolean {
  if (statusOf(row) === 'completed') return true;
  const kind = skipCauseOf(row)?.kind;
  return kind === 'converged' || kind === 'not-chosen';
}

/** Skipped because of a failure, a blocking checkpoint or a rejected artifact upstream: counts as a failure of the run. */
export function skippedForFailure(row: TaskRow): boolean {
  const kind = skipCauseOf(row)?.kind;
  return kind === 'dependency' || kind === 'blocked' || kind === 'rejected';
}

/**
 * The cause a dependent of this finished row is skipped with, or undefined when it may run.
 * The root cause travels down the chain, so one failure does not leave 17 rows that only
 * say "a dependency"; so does a checkpoint's block.
 */
export function causeForDependents(row: TaskRow): SkipCause | undefined {
  if (satisfiesDependents(row)) return undefined;
  const cause = skipCauseOf(row);
  if (cause?.kind === 'blocked' || cause?.kind === 'rejected') return cause;
  if (cause?.kind === 'dependency' && cause.error.startsWith(`${kDependencyFailedError}: `)) return cause;
  return dependencyCause(row.id, statusOf(row));
}
