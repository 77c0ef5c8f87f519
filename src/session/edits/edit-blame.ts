import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import type { TasksTable } from '../../csv/tasks-table.js';
import type { Violation } from '../../errors.js';
import { buildDag } from '../../graph/dag.js';
import { computeWaves } from '../../graph/waves.js';

/** One change of a save, taken or left out as a whole: a row's changed cells, a new row, a removed row. */
export interface EditGroup {
  kind: 'change' | 'add' | 'remove';
  id: string;
  /** The run's row (change, remove), or the new row (add). */
  row: TaskRow;
  /** The cells a change sets, by column. */
  cells: Map<string, string>;
  line: number;
}

/** The table a merge would make, and the change each of its rows comes from (undefined: none). */
export interface Candidate {
  table: TasksTable;
  groupOf: ReadonlyMap<TaskRow, EditGroup | undefined>;
}

/** A change left out, and the first violation it was blamed for. */
export interface Blame {
  group: EditGroup;
  violation: Violation;
}

/**
 * The changes of a save that break the rules of a run's start, checked together: the
 * table with every change is checked, each violation is blamed on the change of the row at
 * its line, else on a change of a task that row waits on (a removed dependency, a context
 * source moved), else, for a cycle, on the changed rows on it; those are left out and the
 * rest checked again, until the rest passes. A violation the table has without any change
 * is no change's fault. One that can be pinned on nothing leaves the whole save out.
 */
export function findBlame(
  groups: readonly EditGroup[],
  build: (active: ReadonlySet<EditGroup>) => Candidate,
  check: (table: TasksTable) => readonly Violation[],
): Blame[] {
  const active = new Set(groups);
  const blamed: Blame[] = [];
  const byId = new Map<string, EditGroup[]>();
  for (const group of groups) byId.set(group.id, [...(byId.get(group.id) ?? []), group]);
  let baseline: Set<string> | undefined;
  while (active.size > 0) {
    const candidate = build(active);
    let violations = check(candidate.table);
    if (violations.length === 0) break;
    if (baseline === undefined) {
      const none = build(new Set());
      baseline = new Set(check(none.table).map((violation) => keyOf(none, violation)));
    }
    const known = baseline;
    violations = violations.filter((violation) => !known.has(keyOf(candidate, violation)));
    if (violations.length === 0) break;
    const drop = new Map<EditGroup, Violation>();
    const blame = (group: EditGroup | undefined, violation: Violation) => {
      if (group !== undefined && active.has(group) && !drop.has(group)) drop.set(group, violation);
    };
    for (const violation of violations) {
      const rows = rowsAt(candidate, violation.line);
      const before = drop.size;
      for (const row of rows) blame(candidate.groupOf.get(row), violation);
      if (drop.size > before) continue;
      for (const row of rows) {
        for (const id of [...splitList(row.deps), ...splitList(row.context_from)]) for (const group of byId.get(id) ?? []) blame(group, violation);
      }
      if (drop.size > before || !violation.message.startsWith('Circular dependency')) continue;
      for (const cycle of cyclesOf(candidate.table.rows)) {
        for (const id of cycle) for (const group of byId.get(id) ?? []) if (group.kind !== 'remove') blame(group, violation);
      }
    }
    if (drop.size === 0) for (const group of active) drop.set(group, violations[0]!);
    for (const [group, violation] of drop) {
      active.delete(group);
      blamed.push({ group, violation });
    }
  }
  return blamed;
}

function rowsAt(candidate: Candidate, line: number): TaskRow[] {
  return candidate.table.rows.filter((row) => row.line === line);
}

/** A violation by the rows it names and its words, the same in two tables whose lines differ. */
function keyOf(candidate: Candidate, violation: Violation): string {
  return `${rowsAt(candidate, violation.line)
    .map((row) => row.id)
    .join(';')}\n${violation.message}`;
}

function cyclesOf(rows: readonly TaskRow[]): string[][] {
  const first = new Map<string, TaskRow>();
  for (const row of rows) if (!first.has(row.id)) first.set(row.id, row);
  return computeWaves(buildDag([...first.values()].map((row) => ({ id: row.id, deps: splitList(row.deps) })))).cycles;
}
