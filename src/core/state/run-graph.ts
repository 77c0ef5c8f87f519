import { doom, newEntry, rankOf, type Entry } from './entry.js';
import { splitList } from '../id-list.js';
import { applyToRows, checkChanges, type ChangeRules, type SessionEdit, type TaskChanges } from '../session-changes.js';
import type { SkipCause } from '../skip-cause.js';
import type { TaskRow } from '../task.js';

/**
 * The tasks of a run among the session's rows, and what each waits on: the wiring the
 * scheduling core reads, derived again from the rows whenever an interactive task
 * changes the session (dynamic tasks, new deps), or a person's edit of tasks.csv does.
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
   * A task held by an artifact gate waits again: the caller admits it anew.
   */
  rewire(causeFrom: (row: TaskRow, dependent: TaskRow) => SkipCause | undefined): void {
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
          const cause = row ? causeFrom(row, entry.row) : undefined;
          if (cause) doom(entry, cause, depList.indexOf(id));
        }
      }
      // Queued before a change made it wait again: the stale queue slot is passed over.
      if (entry.remaining > 0 && (entry.state === 'ready' || entry.state === 'held')) entry.state = 'waiting';
      if (entry.state === 'gated') entry.state = 'waiting';
    }
  }

  /**
   * Writes what an interactive task added and rewired, or what an edit of tasks.csv
   * changed, into the rows and entries (DESIGN.md section 4: new rows appended, waves
   * recomputed), without rewiring. `floor` is the lowest wave a task the change adds or
   * moves may take (0: any). Returns why the change was refused, leaving the session as it
   * was, or the new number of waves and how many unfinished tasks it removed.
   */
  apply(changes: TaskChanges | SessionEdit, rules: ChangeRules, floor = 0): { problem: string } | { waveCount: number; removed: number } {
    const problem = checkChanges(this.rows, changes, rules);
    if (problem) return { problem: `Invalid session change: ${problem}` };
    const added = new Set(changes.add);
    // A new task starts at the floor. One that has not started keeps the wave it had, up to
    // the floor: a change can move it later, or earlier down to the floor, never into a
    // wave that is running (nor one that is done, where it would never run).
    const { waves, waveCount } = applyToRows(this.rows, this.byId, changes, (row) => {
      if (floor === 0) return 0;
      if (added.has(row)) return floor;
      const entry = this.entryById.get(row.id);
      return entry !== undefined && unstarted(entry) ? Math.min(entry.wave, floor) : 0;
    });
    const removed = this.#remove('remove' in changes ? changes.remove : []);
    // A task that started keeps its wave: the lines and files of that wave counted it there.
    for (const entry of this.entries) if (unstarted(entry)) entry.wave = waves.get(entry.row.id)!;
    for (const update of changes.update) {
      const entry = this.entryById.get(update.id);
      if (entry === undefined || entry.state === 'done') continue;
      // Its priority or exec_mode may have changed: queued again, in the right queue and place.
      entry.rank = rankOf(entry.row.priority);
      if (entry.state === 'ready') entry.state = 'waiting';
    }
    for (const row of changes.add) this.#add(row, this.rows.indexOf(row), waves.get(row.id)!);
    return { waveCount, removed };
  }

  /** Takes removed tasks out of the run; their queue slots are passed over (they read as done). */
  #remove(ids: readonly string[]): number {
    if (ids.length === 0) return 0;
    const gone = new Set(ids);
    let removed = 0;
    let kept = 0;
    for (const entry of this.entries) {
      if (!gone.has(entry.row.id)) {
        this.entries[kept++] = entry;
        continue;
      }
      if (entry.state !== 'done') removed++;
      entry.state = 'done';
      this.entryById.delete(entry.row.id);
    }
    this.entries.length = kept;
    return removed;
  }
}

function unstarted(entry: Entry): boolean {
  return entry.attempts === 0 && entry.state !== 'done';
}
