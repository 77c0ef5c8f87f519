import type { TaskRow } from '../../core/task.js';

/** A change of the session's tasks as the run recorded it (run/scheduler.ts's RecordedChange). */
export interface LedgerChange {
  by: 'task' | 'edit';
  added: readonly TaskRow[];
  previous: readonly { id: string; deps: string; context_from: string }[];
}

/**
 * What the run's own tasks changed in tasks.csv (a GC round's new tasks, the deps it
 * rewired), so that a person's save can be told from an older copy of the file. A
 * spreadsheet shows the file as it was when it was opened: a save made later still has
 * the old deps of a rewired task, and lacks the tasks added since. Those are not the
 * person's edits, and the run keeps its own.
 */
export class EditLedger {
  readonly #addedByRun = new Set<string>();
  /** The deps and context_from cells the run replaced, by task. */
  readonly #replaced = new Map<string, { deps: Set<string>; context_from: Set<string> }>();
  readonly #told = new Set<string>();

  /** Told of every change once it is journaled (the outcome sink). */
  readonly changed = (change: LedgerChange): void => {
    if (change.by !== 'task') return;
    for (const row of change.added) this.#addedByRun.add(row.id);
    for (const { id, deps, context_from } of change.previous) {
      let replaced = this.#replaced.get(id);
      if (replaced === undefined) this.#replaced.set(id, (replaced = { deps: new Set(), context_from: new Set() }));
      replaced.deps.add(deps);
      replaced.context_from.add(context_from);
    }
  };

  /** Whether a task of the run's own tasks added it (not the file, nor a person's save). */
  addedByRun(id: string): boolean {
    return this.#addedByRun.has(id);
  }

  /** Whether `value` is what the task's cell held before the run rewired it: a save that shows it is older. */
  isReplaced(id: string, column: 'deps' | 'context_from', value: string): boolean {
    return this.#replaced.get(id)?.[column].has(value) ?? false;
  }

  /** True the first time it is asked about `what`: a note said once per run, not at every save. */
  tellOnce(what: string): boolean {
    if (this.#told.has(what)) return false;
    this.#told.add(what);
    return true;
  }
}
