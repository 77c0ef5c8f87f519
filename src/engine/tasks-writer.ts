import { statSync } from 'node:fs';
import { writeFileAtomic } from '../csv/atomic-write.js';
import { WaveError } from '../errors.js';
import { readTasksFile, serializeTasksInChunks, type ReadOptions, type TasksTable } from '../csv/tasks-file.js';
import type { WriteFn } from '../csv/write-all.js';

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
  /** The write system call (tests inject one that writes less). */
  readonly #write: WriteFn | undefined;
  #written: FileIdentity | undefined;
  /** How long the last write took, so that rewrites of a big file stay a small share of the run. */
  lastWriteMs = 0;
  /** When the last write ended (performance.now()); 0 before the first. */
  lastWriteAt = 0;

  /**
   * @param knownAs the file as this writer's table was read from it; a file that is no
   * longer that one is someone else's edit. Undefined: the first write replaces whatever is there.
   */
  constructor(path: string, table: TasksTable, knownAs?: FileIdentity, write?: WriteFn) {
    this.#path = path;
    this.#write = write;
    this.#table = table;
    this.#written = knownAs;
  }

  /**
   * Reads tasks.csv and returns its table with a writer for it. The file is identified
   * before it is read, so an edit saved during the read counts as someone else's.
   */
  static read(path: string, options: ReadOptions = {}): { table: TasksTable; writer: TasksWriter } {
    const knownAs = identity(path);
    const table = readTasksFile(path, options);
    return { table, writer: new TasksWriter(path, table, knownAs) };
  }

  /** True when the file is no longer the one this writer last wrote (or read). */
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

  /**
   * Writes the table atomically (temporary file, fsync, rename). Returns false, writing
   * nothing, if someone else edited the file. The check is repeated right before the
   * rename, so that an edit saved while the new text was serialised and flushed to disk
   * (the slow part, for a big file) is not replaced.
   *
   * A write that fails (a full disk, a read-only folder) throws WaveError WRITE_FAILED and
   * leaves the old file as it was: the caller keeps the journal, which still holds the run.
   */
  write(): boolean {
    if (this.editedByOthers()) return false;
    const started = performance.now();
    let replaced: boolean;
    try {
      replaced = writeFileAtomic(this.#path, serializeTasksInChunks(this.#table), () => !this.editedByOthers(), this.#write);
    } catch (error) {
      throw new WaveError('WRITE_FAILED', (error as Error).message, { path: this.#path, cause: error });
    }
    if (!replaced) return false;
    this.#written = identity(this.#path);
    this.lastWriteAt = performance.now();
    this.lastWriteMs = this.lastWriteAt - started;
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
