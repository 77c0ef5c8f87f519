import { splitList } from '../csv/columns.js';
import type { TaskRow } from '../csv/tasks-file.js';
import { WaveError } from '../errors.js';
import { buildDag } from '../graph/dag.js';
import { downstream } from '../graph/cascade.js';
import { skippedForFailure } from '../schema/task-state.js';

export interface RerunSelection {
  /** Failed tasks, and the tasks skipped because of a failure. */
  failed?: boolean;
  waves?: readonly number[];
  tasks?: readonly string[];
  /** Also reset everything downstream of the chosen tasks. @default true */
  cascade?: boolean;
}

export interface RerunPlan {
  /** Tasks the selection names. */
  chosen: string[];
  /** Their dependents, reset by the cascade. */
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
  for (const row of rows) {
    const failed = row.status === 'failed' || skippedForFailure(row);
    if ((selection.failed && failed) || selection.waves?.includes(waves.get(row.id) ?? 0)) chosen.add(row.id);
  }
  const cascaded =
    selection.cascade === false
      ? new Set<string>()
      : downstream(buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))), chosen);
  const inFileOrder = (set: Set<string>) => rows.filter((row) => set.has(row.id)).map((row) => row.id);
  return { chosen: inFileOrder(chosen), cascaded: inFileOrder(cascaded) };
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
  }
}
