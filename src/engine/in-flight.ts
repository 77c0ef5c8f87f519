/**
 * The tasks handed to an executor (or the interactive lane) that have not come back. A
 * run that must end before they do takes them back: whatever they answer later is ignored,
 * and the scheduler is told (Scheduler.takeBack), which puts them back to pending and ends
 * the run once nothing else is out.
 */
export class InFlight {
  readonly #tellTakenBack: (ids: string[]) => void;
  readonly #out = new Map<string, { takeBack: () => void }>();
  #tookBack = 0;

  /** @param tookBack told the ids of the tasks just taken back (Scheduler.takeBack) */
  constructor(tookBack: (ids: string[]) => void) {
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
          this.#tookBack++;
        },
      };
      this.#out.set(id, entry);
      const isOut = () => this.#out.get(id) === entry;
      work.then(
        (value) => {
          if (!isOut()) return;
          if (!keep(value)) {
            entry.takeBack();
            this.#tellTakenBack([id]);
            return;
          }
          this.#out.delete(id);
          resolve(value);
        },
        (error: unknown) => {
          if (!isOut()) return;
          this.#out.delete(id);
          reject(error);
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
}
