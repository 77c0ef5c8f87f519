import { AttemptNotRun } from '../backend/execution-backend.js';

/**
 * The tasks handed to an executor (or the interactive lane) that have not come back. A
 * run that must end before they do takes them back: whatever they answer later is ignored,
 * and the scheduler is told (Scheduler.takeBack), which puts them back to pending and ends
 * the run once nothing else is out. A task its backend held back before it began
 * (AttemptNotRun: the budget is spent) is taken back the same way.
 */
export class InFlight {
  readonly #tellTakenBack: (ids: string[]) => void;
  /** By task id, a token of the run of it that is out: a task taken back and started again is another run. */
  readonly #out = new Map<string, object>();
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
    // A token and two callbacks per task, no more: 100,000 tasks may be out at once.
    const token = {};
    this.#out.set(id, token);
    return new Promise<T>((resolve, reject) => {
      work.then(
        (value) => {
          if (this.#out.get(id) !== token) return;
          this.#out.delete(id);
          if (keep(value)) {
            resolve(value);
            return;
          }
          this.#tookBack++;
          this.#tellTakenBack([id]);
        },
        (error: unknown) => {
          if (this.#out.get(id) !== token) return;
          this.#out.delete(id);
          if (error instanceof AttemptNotRun) {
            this.#tookBack++;
            this.#tellTakenBack([id]);
            return;
          }
          reject(error);
        },
      );
    });
  }

  /** Takes back every task that is out; returns their ids. */
  takeBackAll(): string[] {
    const ids = [...this.#out.keys()];
    this.#out.clear();
    this.#tookBack += ids.length;
    if (ids.length > 0) this.#tellTakenBack(ids);
    return ids;
  }
}
