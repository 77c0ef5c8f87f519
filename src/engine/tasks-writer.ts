import { statSync } from 'node:fs';
import { writeTasksFile, type TasksTable } from '../csv/tasks-file.js';

interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
}

/**
 * Rewrites tasks.csv from memory while a run goes, and notices when someone else saved
 * it in between (a person in a spreadsheet): then it refuses to overwrite their edit.
 */
export class TasksWriter {
  readonly #path: string;
  readonly #table: TasksTable;
  #written: FileIdentity | undefined;
  /** How long the last write took, so that rewrites of a big file stay a small share of the run. */
  lastWriteMs = 0;

  constructor(path: string, table: TasksTable) {
    this.#path = path;
    this.#table = table;
  }

  /** True when the file is no longer the one this writer last wrote. */
  editedByOthers(): boolean {
    if (!this.#written) return false;
    const now = identity(this.#path);
    return (
      now === undefined ||
      now.ino !== this.#written.ino ||
      now.size !== this.#written.size ||
      now.mtimeMs !== this.#written.mtimeMs
    );
  }

  /** Writes the table atomically. Returns false, writing nothing, if someone else edited the file. */
  write(): boolean {
    if (this.editedByOthers()) return false;
    const started = performance.now();
    writeTasksFile(this.#path, this.#table);
    this.#written = identity(this.#path);
    this.lastWriteMs = performance.now() - started;
    return true;
  }
}

function identity(path: string): FileIdentity | undefined {
  try {
    const stat = statSync(path);
    return { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs };
  } catch {
    return undefined;
  }
}
