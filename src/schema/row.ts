import { z } from 'zod';

/** How a task is run (DESIGN.md section 2). */
export const kExecModes = [
  /** Batch task, written to its wave file and run on the worker pool. */
  'csv-wave',
  /** Runs one at a time in the interactive lane (GC decision, discussion round). */
  'interactive',
] as const;
export type ExecMode = (typeof kExecModes)[number];

/** The lifecycle of a task. */
export const kTaskStatuses = [
  /** Not run yet (also the meaning of an empty cell). */
  'pending',
  /** Held by a run right now; a crash leaves it here and `resume` puts it back to pending. */
  'in_progress',
  /** Finished with a result. */
  'completed',
  /** Finished without a result; `error` says why. */
  'failed',
  /** Not run: a dependency failed, or a GC check converged; `error` says which. */
  'skipped',
] as const;
export type TaskStatus = (typeof kTaskStatuses)[number];

/** Scheduling priority (seed 003): P0 starts before P1 before P2; empty means P1. */
export const kPriorities = ['P0', 'P1', 'P2'] as const;
export type Priority = (typeof kPriorities)[number];

export const kTaskIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A branch a routing task may choose (`direct`, `orchestrated`): a name, not a sentence. */
export const kBranchNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;

/** A `branch` cell: branch names separated by `;` (stray spaces and a trailing `;` tolerated, as in deps). */
const kBranchListPattern = /^\s*(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,31}\s*(?:;\s*|$))*$/;

const cell = z.string();
const oneOfOrEmpty = (values: readonly string[]) => new RegExp(`^(|${values.join('|')})$`);

/**
 * A row of tasks.csv as it enters the engine. Every cell is a string; the messages are
 * the exact ones of DESIGN.md section 3. Roles, and whether a description and a role are
 * required, are checked against the pipeline apart (session/validate.ts), since they
 * depend on the session: a plain batch needs neither.
 */
export const taskRowSchema = z
  .object({
    id: cell.regex(kTaskIdPattern, { error: (issue) => `Invalid task ID: ${String(issue.input)}` }),
    title: cell,
    description: cell,
    role: cell,
    angle: cell,
    gc_round: cell.regex(/^\d*$/, { error: (issue) => `Invalid gc_round: ${String(issue.input)}` }),
    deps: cell,
    context_from: cell,
    exec_mode: cell.regex(oneOfOrEmpty(kExecModes), {
      error: (issue) => `Invalid exec_mode: ${String(issue.input)}`,
    }),
    wave: cell,
    status: cell.regex(oneOfOrEmpty(kTaskStatuses), {
      error: (issue) => `Invalid status: ${String(issue.input)}`,
    }),
    findings: cell,
    gc_signal: cell,
    severity_summary: cell,
    error: cell,
    priority: cell.regex(oneOfOrEmpty(kPriorities), {
      error: (issue) => `Invalid priority: ${String(issue.input)} (expected P0, P1 or P2)`,
    }),
    branch: cell.regex(kBranchListPattern, {
      error: (issue) => `Invalid branch: ${String(issue.input)} (expected branch names separated by ;, each of letters, digits, . _ -)`,
    }),
    route: cell.regex(/^(|[A-Za-z0-9][A-Za-z0-9_.-]{0,31})$/, {
      error: (issue) => `Invalid route: ${String(issue.input)} (expected one branch name)`,
    }),
  });

export type TaskRowInput = z.infer<typeof taskRowSchema>;
