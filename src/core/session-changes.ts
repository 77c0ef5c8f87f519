import { splitList } from './id-list.js';
import type { GateChange } from './gates.js';
import { kKnownColumns, type KnownColumn, type TaskRow } from './task.js';
import { buildDag } from '../graph/dag.js';
import { computeWaves } from '../graph/waves.js';
import { kTaskIdPattern } from '../schema/row.js';

/** New cells of a task that has not started: its deps and context sources, and (an edit of tasks.csv) any other input cell. */
export interface TaskUpdate {
  id: string;
  deps?: string;
  context_from?: string;
  /**
   * Other input cells by column name, known columns and the person's own (an edit of
   * tasks.csv only). Never `id`, `wave`, `status` nor an output cell: those are the run's.
   */
  cells?: Record<string, string>;
}

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
  /**
   * Artifact gates the task's result changed (core/gates.ts): its own artifacts' and those it
   * validated. Held by the engine's artifact registry, which writes them before the task's finish.
   */
  gates?: GateChange[];
}

/**
 * What a person's save of tasks.csv during a run changes, once csv-wave has merged and
 * validated it (session/edits/): new rows, new input cells, and tasks removed. It goes the
 * way of an interactive task's changes (the same checks, the same journal entries), but
 * with the rules of an edit: input cells of any task that is not running, and removals of
 * tasks that have not started.
 */
export interface SessionEdit {
  /** New tasks (pending), in the order the saved file has them. */
  add: TaskRow[];
  update: TaskUpdate[];
  /** Tasks that have not started, removed from the session. */
  remove: string[];
}

/**
 * Where a task stands for an edit of tasks.csv, which decides what of its row a person may
 * change during a run (docs/durability.md, "An edit during a run").
 */
export type TaskStanding =
  /** In the run, not started, and not in a wave that is running (schedule `waves`): its input cells and its row are the person's. */
  | 'open'
  /** Started: running, waiting for a retry, or taken back by a stop. It keeps its inputs. */
  | 'running'
  /** Not started, but its wave is running (schedule `waves`): it keeps the inputs its wave started with. */
  | 'wave-running'
  /** Finished in this run: its output cells are the run's record. */
  | 'finished'
  /** Finished before this run (it was not pending when the run started): its cells never change in it. */
  | 'earlier';

/** Which tasks a change may touch: rewire or edit (`change`), skip, remove. */
export interface ChangeRules {
  change: (id: string) => boolean;
  skip: (id: string) => boolean;
  remove: (id: string) => boolean;
  /** Why a task may not be touched, for the message. */
  refusal: string;
}

/** Cells an update may never set: the id, and what the run computes or writes. */
const kRunCells: ReadonlySet<string> = new Set<string>(['id', 'wave', 'status', 'findings', 'gc_signal', 'severity_summary', 'error', 'route']);

/**
 * Why a change cannot be applied (an id taken or malformed, a task the rules do not let it
 * touch, an unknown dependency, a cycle), or undefined when it can.
 */
export function checkChanges(rows: readonly TaskRow[], changes: TaskChanges | SessionEdit, rules: ChangeRules): string | undefined {
  const removed = new Set('remove' in changes ? changes.remove : []);
  const ids = new Set(rows.map((row) => row.id));
  for (const id of removed) {
    if (!ids.has(id) || !rules.remove(id)) return `task ${id} ${rules.refusal}`;
    ids.delete(id);
  }
  for (const row of changes.add) {
    if (!kTaskIdPattern.test(row.id)) return `invalid task id ${row.id}`;
    if (ids.has(row.id)) return `task ${row.id} exists already`;
    ids.add(row.id);
  }
  for (const update of changes.update) {
    if (removed.has(update.id) || !rules.change(update.id)) return `task ${update.id} ${rules.refusal}`;
    for (const name of Object.keys((update as TaskUpdate).cells ?? {})) {
      if (kRunCells.has(name)) return `the ${name} cell of ${update.id} is the run's`;
    }
  }
  for (const { id } of 'skip' in changes ? changes.skip : []) {
    if (!rules.skip(id)) return `task ${id} ${rules.refusal}`;
  }
  const updated = new Map(changes.update.map((update) => [update.id, update]));
  const all = [...rows.filter((row) => !removed.has(row.id)), ...changes.add];
  for (const row of all) {
    for (const dep of splitList(updated.get(row.id)?.deps ?? row.deps)) {
      if (!ids.has(dep)) return `task ${row.id} depends on unknown task ${dep}`;
    }
  }
  const graph = buildDag(all.map((row) => ({ id: row.id, deps: splitList(updated.get(row.id)?.deps ?? row.deps) })));
  const { cycles } = computeWaves(graph);
  return cycles.length > 0 ? `it would make a cycle of ${cycles[0]!.join(';')}` : undefined;
}

const kKnownCells: ReadonlySet<string> = new Set<string>(kKnownColumns);

/**
 * Writes accepted changes into the session's rows: rows removed, new rows appended, deps,
 * context_from and other input cells set, every wave recomputed and its cell filled
 * (DESIGN.md section 4). `floorOf` gives a row the lowest wave it may take (0: none): a
 * task an edit adds or moves goes no earlier than the wave after the one running, and
 * what waits on it after it.
 */
export function applyToRows(
  rows: TaskRow[],
  byId: Map<string, TaskRow>,
  changes: TaskChanges | SessionEdit,
  floorOf: (row: TaskRow) => number = () => 0,
): { waves: Map<string, number>; waveCount: number } {
  const removed = new Set('remove' in changes ? changes.remove : []);
  if (removed.size > 0) {
    let kept = 0;
    for (const row of rows) if (!removed.has(row.id)) rows[kept++] = row;
    rows.length = kept;
    for (const id of removed) byId.delete(id);
  }
  rows.push(...changes.add);
  for (const row of changes.add) byId.set(row.id, row);
  for (const update of changes.update as TaskUpdate[]) {
    const row = byId.get(update.id)!;
    if (update.deps !== undefined) row.deps = update.deps;
    if (update.context_from !== undefined) row.context_from = update.context_from;
    for (const [name, value] of Object.entries(update.cells ?? {})) {
      if (kKnownCells.has(name)) row[name as KnownColumn] = value;
      else row.extra[name] = value;
    }
  }
  const { waves: dagWaves } = computeWaves(buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))));
  const waves = flooredWaves(rows, dagWaves, floorOf);
  let waveCount = 0;
  for (const row of rows) {
    const wave = waves.get(row.id)!;
    row.wave = String(wave);
    if (wave > waveCount) waveCount = wave;
  }
  return { waves, waveCount };
}

/**
 * The waves with each row's floor: a row is no earlier than its floor, and after every
 * dependency and context source. Rows in the order of their plain waves come after what
 * they wait on, so one pass does it; without floors these are the plain waves.
 */
function flooredWaves(rows: readonly TaskRow[], dagWaves: ReadonlyMap<string, number>, floorOf: (row: TaskRow) => number): Map<string, number> {
  const floors = rows.map(floorOf);
  if (floors.every((floor) => floor === 0)) return new Map(dagWaves);
  const order = rows.map((_, index) => index).sort((a, b) => dagWaves.get(rows[a]!.id)! - dagWaves.get(rows[b]!.id)!);
  const waves = new Map<string, number>();
  for (const index of order) {
    const row = rows[index]!;
    let wave = Math.max(dagWaves.get(row.id)!, floors[index]!);
    for (const id of [...splitList(row.deps), ...splitList(row.context_from)]) {
      const upstream = waves.get(id);
      if (upstream !== undefined && upstream >= wave) wave = upstream + 1;
    }
    waves.set(row.id, wave);
  }
  return waves;
}
