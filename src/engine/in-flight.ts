import type { TaskRow } from '../core/task.js';

/**
 * The tasks handed to an executor (or the interactive lane) that have not come back. A
 * run that must end before they do takes them back: they go back to pending, whatever
 * they answer later is ignored, and `drained` resolves once nothing else is out.
 */
export class InFlight {
  readonly #rowOf: (id: string) => TaskRow | undefined;
  readonly #out = new Map<string, { takeBack: () => void }>();
  #tookBack = 0;
  #resolveDrained: () => void = () => {};
  readonly drained = new Promise<void>((resolve) => {
    this.#resolveDrained = resolve;
  });

  constructor(rowOf: (id: string) => TaskRow | undefined) {
    this.#rowOf = rowOf;
  }

  /** Passes on what `work` resolves with, unless `keep` says no: then the task is taken back. */
  track<T>(id: string, work: Promise<T>, keep: (value: T) => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = {
        takeBack: () => {
          this.#out.delete(id);
          const row = this.#rowOf(id);
          if (row) row.status = 'pending';
          this.#tookBack++;
          this.#checkDrained();
        },
      };
      this.#out.set(id, entry);
      const isOut = () => this.#out.get(id) === entry;
      work.then(
        (value) => {
          if (!isOut()) return;
          if (!keep(value)) {
            entry.takeBack();
            return;
          }
          this.#out.delete(id);
          resolve(value);
          this.#checkDrained();
        },
        (error: unknown) => {
          if (!isOut()) return;
          this.#out.delete(id);
          reject(error);
          this.#checkDrained();
        },
      );
    });
  }

  /** Takes back every task that is out; returns their ids. */
  takeBackAll(): string[] {
    const ids = [...this.#out.keys()];
    for (const entry of [...this.#out.values()]) entry.takeBack();
    return ids;
  }

  #checkDrained(): void {
    // After the scheduler has dealt with the last answer that was passed on (a later turn).
    if (this.#tookBack > 0 && this.#out.size === 0) setImmediate(this.#resolveDrained);
  }
}
