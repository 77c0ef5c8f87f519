import type { TaskRow } from '../core/task.js';

/**
 * The tasks handed to an executor (or the interactive lane) that have not come back. A
 * run that must end before they do takes them back: they go back to pending, whatever
 * they answer later is ignored, the scheduler is told (it ends the run once nothing else
 * is out), and `drained` resolves once nothing else is out here.
 */
export class InFlight {
  readonly #rowOf: (id: string) => TaskRow | undefined;
  readonly #tellTakenBack: (ids: string[]) => void;
  readonly #out = new Map<string, { takeBack: () => void }>();
  #tookBack = 0;
  #resolveDrained: () => void = () => {};
  readonly drained = new Promise<void>((resolve) => {
    this.#resolveDrained = resolve;
  });

  /** @param tookBack told the ids of the tasks just taken back (Scheduler.takeBack) */
  constructor(rowOf: (id: string) => TaskRow | undefined, tookBack: (ids: string[]) => void = () => {}) {
    this.#rowOf = rowOf;
    this.#tellTakenBack = tookBack;
  }

  /** Whether any task was taken back. */
  get tookBack(): boolean {
    return this.#tookBack > 0;
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
      const takeBackOne = () => {
        entry.takeBack();
        this.#tellTakenBack([id]);
      };
      this.#out.set(id, entry);
      const isOut = () => this.#out.get(id) === entry;
      work.then(
        (value) => {
          if (!isOut()) return;
          if (!keep(value)) {
            takeBackOne();
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
    if (ids.length > 0) this.#tellTakenBack(ids);
    return ids;
  }

  #checkDrained(): void {
    // After the scheduler has dealt with the last answer that was passed on (a later turn).
    if (this.#tookBack > 0 && this.#out.size === 0) setImmediate(this.#resolveDrained);
  }
}
