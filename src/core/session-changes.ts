import { splitList } from './id-list.js';
import type { TaskRow } from './task.js';
import { fillWaveColumn } from './wave-column.js';
import { buildDag } from '../graph/dag.js';
import { computeWaves } from '../graph/waves.js';
import { kTaskIdPattern } from '../schema/row.js';

/**
 * What an interactive task changes in the session besides its own row (the interactive
 * lane's SessionChanges is this type): dynamic tasks appended, pending tasks rewired,
 * pending tasks skipped. Applied at once, when the task finishes completed.
 */
export interface TaskChanges {
  /** New tasks, appended to tasks.csv in this order. */
  add: TaskRow[];
  /** New deps / context_from of existing tasks that have not started. */
  update: { id: string; deps?: string; context_from?: string }[];
  /** Tasks that have not started, skipped with the error that says why. */
  skip: { id: string; error: string }[];
}

/**
 * Why a change cannot be applied (an id taken or malformed, a task not pending in this
 * run, an unknown dependency, a cycle), or undefined when it can.
 * `pendingInRun` says whether a task of this run has neither started nor finished.
 */
export function checkChanges(rows: readonly TaskRow[], changes: TaskChanges, pendingInRun: (id: string) => boolean): string | undefined {
  const ids = new Set(rows.map((row) => row.id));
  for (const row of changes.add) {
    if (!kTaskIdPattern.test(row.id)) return `invalid task id ${row.id}`;
    if (ids.has(row.id)) return `task ${row.id} exists already`;
    ids.add(row.id);
  }
  for (const { id } of [...changes.update, ...changes.skip]) {
    if (!pendingInRun(id)) return `task ${id} is not a pending task of this run`;
  }
  const updated = new Map(changes.update.map((update) => [update.id, update]));
  const all = [...rows, ...changes.add];
  for (const row of all) {
    for (const dep of splitList(updated.get(row.id)?.deps ?? row.deps)) {
      if (!ids.has(dep)) return `task ${row.id} depends on unknown task ${dep}`;
    }
  }
  const graph = buildDag(all.map((row) => ({ id: row.id, deps: splitList(updated.get(row.id)?.deps ?? row.deps) })));
  const { cycles } = computeWaves(graph);
  return cycles.length > 0 ? `it would make a cycle of ${cycles[0]!.join(';')}` : undefined;
}

/**
 * Writes accepted changes into the session's rows: new rows appended, deps and
 * context_from rewired, every wave recomputed and its cell filled (DESIGN.md section 4).
 */
export function applyToRows(rows: TaskRow[], byId: ReadonlyMap<string, TaskRow>, changes: TaskChanges): { waves: Map<string, number>; waveCount: number } {
  rows.push(...changes.add);
  for (const update of changes.update) {
    const row = byId.get(update.id)!;
    if (update.deps !== undefined) row.deps = update.deps;
    if (update.context_from !== undefined) row.context_from = update.context_from;
  }
  const { waves, waveCount } = computeWaves(buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))));
  fillWaveColumn(rows, waves);
  return { waves, waveCount };
}
