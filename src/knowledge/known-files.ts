import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout } from '../layout.js';

/**
 * Which discovery files, and whether `wisdom/`, exist in a session folder, as the engine's
 * main thread knows it during a run: read once when the run starts, then kept up to date by
 * the run's own writes (it is their only writer; workers write nothing there). Building an
 * attempt's upstream context then costs no file-system check for a file that is not there,
 * which is most dependencies of a batch (a generic session writes a discovery file only
 * when it holds more than the row).
 */
export class KnownFiles {
  /** Undefined when the folder could not be listed (a file in its place, no permission): every file is looked for. */
  readonly #discoveries: Set<string> | undefined;
  #wisdom: boolean;

  constructor(sessionDir: string) {
    this.#discoveries = discoveryIds(join(sessionDir, kLayout.discoveryRecords));
    this.#wisdom = existsSync(join(sessionDir, kLayout.wisdom));
  }

  /** False only when `discoveries/<id>.json` is surely missing. */
  mayHaveDiscovery(taskId: string): boolean {
    return this.#discoveries?.has(taskId) ?? true;
  }

  discoveryWritten(taskId: string): void {
    this.#discoveries?.add(taskId);
  }

  discoveryRemoved(taskId: string): void {
    this.#discoveries?.delete(taskId);
  }

  /** False only when `wisdom/` is surely missing. */
  mayHaveWisdom(): boolean {
    return this.#wisdom;
  }

  wisdomWritten(): void {
    this.#wisdom = true;
  }
}

/** The task ids of `discoveries/*.json`; an empty set when the folder is missing, undefined when it cannot be listed. */
function discoveryIds(folder: string): Set<string> | undefined {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    return undefined;
  }
  return new Set(names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)));
}
