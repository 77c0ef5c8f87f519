import { splitList } from './id-list.js';
import { notChosenCause, statusOf, type SkipCause } from './skip-cause.js';
import type { TaskRow } from './task.js';
import { kBranchNamePattern } from '../schema/row.js';

/*
 * Conditional routing (seed 003, "PLAN-001 assesses complexity and routes accordingly"): a
 * task's result may choose one named branch (`route`); its dependents that declare branches
 * (their `branch` cell, or the pipeline's) and are not on the chosen one are skipped as not
 * chosen, which, like a converged GC check, satisfies their own dependents. A dependent that
 * declares no branch runs whatever is chosen, and a task that chose nothing routes nothing.
 */

/** The branches a task is on. */
export type BranchOf = (row: TaskRow) => readonly string[];

/** A task's `branch` cell, as a list: the default BranchOf. */
export function branchCell(row: TaskRow): readonly string[] {
  return splitList(row.branch);
}

/**
 * Why a routing task's `route` cannot be taken, or undefined: not a branch name, or a name
 * none of its dependents is on while some of them are on branches (a typo would skip them all).
 */
export function routeProblem(router: string, route: string, rows: readonly TaskRow[], branchOf: BranchOf): string | undefined {
  if (!kBranchNamePattern.test(route)) {
    return `Invalid route of ${router}: ${JSON.stringify(route.slice(0, 40))} is no branch name (letters, digits, . _ -, at most 32)`;
  }
  const offered = new Set<string>();
  for (const row of rows) {
    if (!splitList(row.deps).includes(router)) continue;
    for (const branch of branchOf(row)) offered.add(branch);
  }
  if (offered.size === 0 || offered.has(route)) return undefined;
  return `Invalid route of ${router}: "${route}" is none of the branches its dependents are on (${[...offered].sort().join(', ')})`;
}

/** The cause a dependent of a finished routing task is skipped with (on another branch), or undefined when it may run. */
export function routeCause(router: TaskRow, dependent: TaskRow, branchOf: BranchOf): SkipCause | undefined {
  if (router.route === '' || statusOf(router) !== 'completed') return undefined;
  const branches = branchOf(dependent);
  return branches.length === 0 || branches.includes(router.route) ? undefined : notChosenCause(router.id, router.route);
}
