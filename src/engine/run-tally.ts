import type { RunEmitter } from './events.js';

/**
 * What a run did, for its summary, counted from its events: a halt or a stop leaves
 * scheduled tasks that never started, and tasks added during the run (a GC round, a
 * discussion) ran in it too.
 */
export class RunTally {
  readonly #started = new Set<string>();
  #attempts = 0;
  #added = 0;

  constructor(events: RunEmitter) {
    events.on('task:start', (event) => {
      this.#started.add(event.id);
      this.#attempts++;
    });
    events.on('tasks:changed', (change) => {
      this.#added += change.added.length;
    });
  }

  /** Tasks that started at least once. */
  get ran(): number {
    return this.#started.size;
  }

  /** Attempts started, retries included. */
  get attempts(): number {
    return this.#attempts;
  }

  /** Tasks added while the run went. */
  get added(): number {
    return this.#added;
  }
}
