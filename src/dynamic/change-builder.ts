import { splitList } from '../core/id-list.js';
import type { GateChange } from '../core/gates.js';
import type { TaskChanges } from '../core/session-changes.js';
import type { TaskRow } from '../core/task.js';

/**
 * Several session changes made from one finished task (its handler's, a fix round, the roles
 * it injects), composed in turn: each is made against the rows as the ones before it left
 * them (`view`), and together they are one TaskChanges for the scheduling core, applied at
 * once and journaled before tasks.csv shows them. A row added here and rewired by a later
 * change is added rewired.
 */
export class ChangeBuilder {
  readonly #base: readonly TaskRow[];
  readonly #added: TaskRow[] = [];
  readonly #updates = new Map<string, { deps?: string; context_from?: string }>();
  readonly #skips = new Map<string, string>();
  readonly #gates = new Map<string, GateChange>();
  #view: TaskRow[] | undefined;

  constructor(rows: readonly TaskRow[]) {
    this.#base = rows;
  }

  /** The session's rows with the changes so far: changed rows are copies; the base rows are never written. */
  view(): readonly TaskRow[] {
    if (this.#view !== undefined) return this.#view;
    const rows = this.#base.map((row) => {
      const update = this.#updates.get(row.id);
      return update === undefined ? row : { ...row, ...update };
    });
    this.#view = [...rows, ...this.#added];
    return this.#view;
  }

  /** A row of the view by id. */
  row(id: string): TaskRow | undefined {
    return this.view().find((row) => row.id === id);
  }

  add(changes: TaskChanges): void {
    this.#view = undefined;
    for (const row of changes.add) this.#added.push(row);
    for (const update of changes.update) {
      const added = this.#added.find((row) => row.id === update.id);
      if (added !== undefined) {
        if (update.deps !== undefined) added.deps = update.deps;
        if (update.context_from !== undefined) added.context_from = update.context_from;
        continue;
      }
      const merged = { ...this.#updates.get(update.id) };
      if (update.deps !== undefined) merged.deps = update.deps;
      if (update.context_from !== undefined) merged.context_from = update.context_from;
      this.#updates.set(update.id, merged);
    }
    for (const skip of changes.skip) if (!this.#skips.has(skip.id)) this.#skips.set(skip.id, skip.error);
    for (const gate of changes.gates ?? []) this.#gates.set(gate.id, gate);
  }

  /** Adds `id` to the deps (and, with `context`, the context_from) of a row of the view, once. */
  wire(rowId: string, id: string, context: boolean): void {
    const row = this.row(rowId);
    if (row === undefined) return;
    const deps = splitList(row.deps);
    const sources = splitList(row.context_from);
    const update: { id: string; deps?: string; context_from?: string } = { id: rowId };
    if (!deps.includes(id)) update.deps = [...deps, id].join(';');
    if (context && !sources.includes(id)) update.context_from = [...sources, id].join(';');
    if (update.deps !== undefined || update.context_from !== undefined) this.add({ add: [], update: [update], skip: [] });
  }

  /** Whether nothing was changed. */
  get empty(): boolean {
    return this.#added.length + this.#updates.size + this.#skips.size + this.#gates.size === 0;
  }

  /** The changes together, for the scheduling core. */
  changes(): TaskChanges {
    return {
      add: [...this.#added],
      update: [...this.#updates].map(([id, update]) => ({ id, ...update })),
      skip: [...this.#skips].map(([id, error]) => ({ id, error })),
      ...(this.#gates.size === 0 ? {} : { gates: [...this.#gates.values()] }),
    };
  }
}

/** A row that has not started (its status empty or pending): one a change may rewire or skip. */
export function isPending(row: TaskRow): boolean {
  return row.status === '' || row.status === 'pending';
}

/** The ids every task of `id` depends on, directly or not, over the rows as they stand. */
export function upstreamOf(rows: readonly TaskRow[], id: string): Set<string> {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const seen = new Set<string>();
  const stack = splitList(byId.get(id)?.deps ?? '');
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...splitList(byId.get(next)?.deps ?? ''));
  }
  return seen;
}
