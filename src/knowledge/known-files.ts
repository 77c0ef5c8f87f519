import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Which discovery files, and whether `wisdom/`, exist in a session folder, as the engine's
 * main thread knows it during a run: read once when the run starts, then kept up to date by
 * the run's own writes (it is their only writer; workers write nothing there). Building an
 * attempt's upstream context then costs no file-system check for a file that is not there,
 * which is most dependencies of a batch (a generic session writes a discovery file only
 * when it holds more than the row).
 */
export class KnownFiles {
  readonly #discoveries: Set<string>;
  #wisdom: boolean;

  constructor(sessionDir: string) {
    const folder = join(sessionDir, 'discoveries');
    const names = existsSync(folder) ? readdirSync(folder) : [];
    this.#discoveries = new Set(names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)));
    this.#wisdom = existsSync(join(sessionDir, 'wisdom'));
  }

  /** False only when `discoveries/<id>.json` is surely missing. */
  mayHaveDiscovery(taskId: string): boolean {
    return this.#discoveries.has(taskId);
  }

  discoveryWritten(taskId: string): void {
    this.#discoveries.add(taskId);
  }

  /** False only when `wisdom/` is surely missing. */
  mayHaveWisdom(): boolean {
    return this.#wisdom;
  }

  wisdomWritten(): void {
    this.#wisdom = true;
  }
}
