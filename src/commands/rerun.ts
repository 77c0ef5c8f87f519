import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { WaveError } from '../errors.js';
import { buildDag } from '../graph/dag.js';
import { downstream } from '../graph/cascade.js';
import { satisfiesDependents, skipCauseOf, skippedForFailure } from '../core/skip-cause.js';

export interface RerunSelection {
  /**
   * Failed tasks, and the tasks skipped because of a failure; for a task blocked by an
   * artifact that failed validation, the artifact's producer too.
   */
  failed?: boolean;
  waves?: readonly number[];
  tasks?: readonly string[];
  /**
   * Completed tasks whose inputs changed since their result was made (`rerun --stale`):
   * the run computes them (cache/stale.ts) and fills `staleIds`.
   */
  stale?: boolean;
  /** The stale tasks, with `stale`. */
  staleIds?: ReadonlySet<string>;
  /** Also reset everything downstream of the chosen tasks. @default true */
  cascade?: boolean;
}

export interface RerunPlan {
  /** Tasks the selection names. */
  chosen: string[];
  /**
   * The chosen tasks that execute whatever the result cache holds (a person asked for new
   * results): all of them but the tasks `--failed` chose because they were skipped, which,
   * like the cascaded ones, take a cached result when their inputs are unchanged.
   */
  forced: string[];
  /**
   * Their dependents that go back to pending: every one of them, or with `cascade: false`
   * only those skipped because of the chosen tasks (completed dependents keep their results).
   */
  cascaded: string[];
}

/** Which tasks a rerun resets, in file order. */
export function planRerun(rows: readonly TaskRow[], waves: ReadonlyMap<string, number>, selection: RerunSelection): RerunPlan {
  const ids = new Set(rows.map((row) => row.id));
  for (const id of selection.tasks ?? []) {
    if (!ids.has(id)) throw new WaveError('USAGE', `rerun --task: no task ${id} in tasks.csv`);
  }
  const highest = Math.max(0, ...waves.values());
  for (const wave of selection.waves ?? []) {
    if (!Number.isInteger(wave) || wave < 1 || wave > highest) {
      throw new WaveError('USAGE', `rerun --wave: expected a wave from 1 to ${highest}, got ${wave}`);
    }
  }
  const chosen = new Set<string>(selection.tasks ?? []);
  const forced = new Set<string>(selection.tasks ?? []);
  for (const row of rows) {
    const failed = row.status === 'failed' || skippedForFailure(row);
    const inWave = selection.waves?.includes(waves.get(row.id) ?? 0) === true;
    const stale = selection.stale === true && selection.staleIds?.has(row.id) === true;
    if ((selection.failed && failed) || inWave || stale) chosen.add(row.id);
    if ((selection.failed && row.status === 'failed') || inWave || stale) forced.add(row.id);
    // A task blocked by an artifact that failed validation would run past the gate if reset
    // alone (its dependencies are done): the artifact's producer makes it again, and the
    // validators and the blocked task below it follow.
    const cause = skipCauseOf(row);
    if (selection.failed && cause?.kind === 'rejected' && ids.has(cause.source)) {
      chosen.add(cause.source);
      forced.add(cause.source);
    }
  }
  const cascaded =
    selection.cascade === false
      ? skippedBecauseOf(rows, waves, chosen)
      : downstream(buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))), chosen);
  const inFileOrder = (set: Set<string>) => rows.filter((row) => set.has(row.id)).map((row) => row.id);
  return { chosen: inFileOrder(chosen), forced: inFileOrder(forced), cascaded: inFileOrder(cascaded) };
}

/**
 * The tasks skipped only because of the chosen ones (directly or down a chain of such
 * skips): left skipped, they would never run, and the next `run` would find nothing to do.
 * A task that also waits on a failure outside the selection stays skipped.
 */
function skippedBecauseOf(rows: readonly TaskRow[], waves: ReadonlyMap<string, number>, chosen: ReadonlySet<string>): Set<string> {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const reset = new Set(chosen);
  const found = new Set<string>();
  // In wave order, so that a task's dependencies are decided before it.
  const ordered = [...rows].sort((a, b) => (waves.get(a.id) ?? 0) - (waves.get(b.id) ?? 0));
  for (const row of ordered) {
    if (reset.has(row.id) || !skippedForFailure(row)) continue;
    const blockers = splitList(row.deps).filter((id) => {
      const dep = byId.get(id);
      return dep !== undefined && (!satisfiesDependents(dep) || blockedBy(row, id));
    });
    if (blockers.length > 0 && blockers.every((id) => reset.has(id))) {
      reset.add(row.id);
      found.add(row.id);
    }
  }
  return found;
}

/** Skipped because this checkpoint (which itself completed) said block. */
function blockedBy(row: TaskRow, checkpoint: string): boolean {
  const cause = skipCauseOf(row);
  return cause?.kind === 'blocked' && cause.source === checkpoint;
}

/** Puts tasks back to pending with empty output columns. */
export function resetTasks(rows: readonly TaskRow[], ids: Iterable<string>): void {
  const reset = new Set(ids);
  for (const row of rows) {
    if (!reset.has(row.id)) continue;
    row.status = 'pending';
    row.findings = '';
    row.gc_signal = '';
    row.severity_summary = '';
    row.error = '';
    row.route = '';
  }
}
