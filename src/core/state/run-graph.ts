import { doom, newEntry, type Entry } from './entry.js';
import { splitList } from '../id-list.js';
import { applyToRows, checkChanges, type TaskChanges } from '../session-changes.js';
import type { SkipCause } from '../skip-cause.js';
import type { TaskRow } from '../task.js';

/**
 * The tasks of a run among the session's rows, and what each waits on: the wiring the
 * scheduling core reads, derived again from the rows whenever an interactive task
 * changes the session (dynamic tasks, new deps).
 */
export class RunGraph {
  /** The session's table: dynamic tasks are appended to it, and results written into it. */
  readonly rows: TaskRow[];
  readonly byId: Map<string, TaskRow>;
  /** The tasks of this run, in file order (dynamic tasks appended). */
  readonly entries: Entry[] = [];
  readonly entryById = new Map<string, Entry>();

  constructor(rows: TaskRow[], waves: ReadonlyMap<string, number>, runIds: ReadonlySet<string>) {
    this.rows = rows;
    this.byId = new Map(rows.map((row) => [row.id, row]));
    rows.forEach((row, index) => {
      if (runIds.has(row.id)) this.#add(row, index, waves.get(row.id) ?? 1);
    });
  }

  #add(row: TaskRow, index: number, wave: number): void {
    const entry = newEntry(row, index, wave);
    this.entries.push(entry);
    this.entryById.set(row.id, entry);
  }

  /**
   * Derives what each unfinished task still waits on, who waits on it, and which are to
   * be skipped (`causeFrom` says why a dependent of a finished task is skipped, if it is).
   */
  rewire(causeFrom: (row: TaskRow) => SkipCause | undefined): void {
    for (const entry of this.entries) entry.dependents = [];
    for (const entry of this.entries) {
      if (entry.state === 'done') continue;
      entry.remaining = 0;
      const depList = splitList(entry.row.deps);
      const deps = new Set(depList);
      // Context sources must be finished too, so that eager runs see the same prev_context.
      const prerequisites = new Set([...deps, ...splitList(entry.row.context_from)]);
      prerequisites.delete(entry.row.id);
      for (const id of prerequisites) {
        const upstream = this.entryById.get(id);
        if (upstream && upstream.state !== 'done') {
          entry.remaining++;
          upstream.dependents.push(entry);
        } else if (deps.has(id)) {
          const row = this.byId.get(id);
          const cause = row ? causeFrom(row) : undefined;
          if (cause) doom(entry, cause, depList.indexOf(id));
        }
      }
      // Queued before a change made it wait again: the stale queue slot is passed over.
      if (entry.remaining > 0 && (entry.state === 'ready' || entry.state === 'held')) entry.state = 'waiting';
    }
  }

  /**
   * Writes what an interactive task added and rewired into the rows and entries (DESIGN.md
   * section 4: new rows appended, waves recomputed), without rewiring. Returns why the
   * change was refused, leaving the session as it was, or the new number of waves.
   */
  apply(changes: TaskChanges): { problem: string } | { waveCount: number } {
    const problem = checkChanges(this.rows, changes, (id) => {
      const entry = this.entryById.get(id);
      return entry !== undefined && entry.attempts === 0 && entry.state !== 'done';
    });
    if (problem) return { problem: `Invalid session change: ${problem}` };
    for (const row of changes.add) this.byId.set(row.id, row);
    const { waves, waveCount } = applyToRows(this.rows, this.byId, changes);
    for (const entry of this.entries) entry.wave = waves.get(entry.row.id)!;
    for (const row of changes.add) this.#add(row, this.rows.indexOf(row), waves.get(row.id)!);
    return { waveCount };
  }
}
