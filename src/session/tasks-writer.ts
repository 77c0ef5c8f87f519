import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { writeFileAtomic } from '../files/atomic-write.js';
import { decodeUtf8Text } from '../csv/utf8-text.js';
import { parseTasks, type ReadOptions } from '../csv/parse-tasks.js';
import { serializeTasksInChunks } from '../csv/serialize-tasks.js';
import type { TasksTable } from '../csv/tasks-table.js';
import type { WriteFn } from '../files/write-all.js';
import { WaveError } from '../errors.js';
import { addFilledColumns } from '../pipelines/pipeline-columns.js';

interface FileIdentity {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** tasks.csv as someone else saved it during a run (TasksWriter.readSaved). */
export type SavedRead =
  /** Read and parsed, with its text; the writer now knows the file as this save. */
  | { kind: 'read'; table: TasksTable }
  /** It changed while it was read (a program still writing it): look again later. */
  | { kind: 'settling' }
  /**
   * Gone, or no longer a tasks file csv-wave can read (not CSV, not UTF-8, a required
   * column lost). `hash` names the bytes (empty when there are none), to tell whether a
   * later look finds the same file.
   */
  | { kind: 'unreadable'; error: WaveError; hash: string };

/**
 * Rewrites tasks.csv from memory while a run goes, and notices when someone else saved
 * it in between (a person in a spreadsheet): then it refuses to overwrite their edit until
 * it has read it (readSaved), for the run to merge.
 */
export class TasksWriter {
  readonly #path: string;
  readonly #table: TasksTable;
  /** The write system call (tests inject one that writes less). */
  readonly #write: WriteFn | undefined;
  #written: FileIdentity | undefined;
  /** SHA-256 of the bytes last written (or read): a file saved again with them is no edit. */
  #writtenHash: string | undefined;
  /** How long the last write took, so that rewrites of a big file stay a small share of the run. */
  lastWriteMs = 0;
  /** When the last write ended (performance.now()); 0 before the first. */
  lastWriteAt = 0;

  /**
   * @param knownAs the file as this writer's table was read from it; a file that is no
   * longer that one is someone else's edit. Undefined: the first write replaces whatever is there.
   */
  constructor(path: string, table: TasksTable, knownAs?: FileIdentity, knownHash?: string, write?: WriteFn) {
    this.#path = path;
    this.#write = write;
    this.#table = table;
    this.#written = knownAs;
    this.#writtenHash = knownHash;
  }

  /**
   * Reads tasks.csv and returns its table with a writer for it. The file is identified
   * before it is read, so an edit saved during the read counts as someone else's.
   */
  static read(path: string, options: ReadOptions = {}): { table: TasksTable; writer: TasksWriter } {
    const knownAs = identity(path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new WaveError('IO', `Cannot read ${path}: ${(error as Error).message}`, { path, cause: error });
    }
    // The hash is of the very bytes the table comes from: an edit saved after the stat and
    // before the read is in both, so nothing is lost when it is later taken as no edit.
    const table = parseTasks(decodeUtf8Text(bytes, path), path, options);
    const hash = createHash('sha256').update(bytes).digest('hex');
    return { table, writer: new TasksWriter(path, table, knownAs, hash) };
  }

  /**
   * True when the file's content is no longer what this writer last wrote (or read). The
   * size tells most edits at once; a new modification time or inode with the same size
   * (`touch`, a spreadsheet saving the file unchanged) is compared by content hash.
   */
  editedByOthers(): boolean {
    if (!this.#written) return false;
    const now = identity(this.#path);
    if (now === undefined || now.size !== this.#written.size) return true;
    if (now.ino === this.#written.ino && now.mtimeMs === this.#written.mtimeMs) return false;
    if (this.#writtenHash === undefined || hashOf(this.#path) !== this.#writtenHash) return true;
    // The same bytes: remember the new identity, so that the file is not hashed again.
    this.#written = now;
    return false;
  }

  /**
   * Reads tasks.csv as someone else saved it, with its text (`keepText`), to merge it into
   * the run. Once it is read, this writer knows the file as that save: its next write
   * replaces it only if nothing was saved since. A file that changed during the read, or
   * that cannot be read or parsed, is not taken as known: no write goes over it.
   */
  readSaved(options: ReadOptions = {}): SavedRead {
    const before = identity(this.#path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#path);
    } catch (error) {
      const message = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file is gone' : (error as Error).message;
      return { kind: 'unreadable', error: new WaveError('IO', `Cannot read ${this.#path}: ${message}`, { path: this.#path, cause: error }), hash: '' };
    }
    const after = identity(this.#path);
    if (before === undefined || after === undefined || before.ino !== after.ino || before.size !== after.size || before.mtimeMs !== after.mtimeMs) {
      return { kind: 'settling' };
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    let table: TasksTable;
    try {
      table = parseTasks(decodeUtf8Text(bytes, this.#path), this.#path, { ...options, keepText: true });
    } catch (error) {
      if (!(error instanceof WaveError)) throw error;
      return { kind: 'unreadable', error, hash };
    }
    this.#written = before;
    this.#writtenHash = hash;
    return { kind: 'read', table };
  }

  /**
   * Writes the table atomically (temporary file, fsync, rename). Returns false, writing
   * nothing, if someone else edited the file. A table whose text is the file's own bytes
   * leaves the file untouched, and returns true. The check is repeated right before the
   * rename, so that an edit saved while the new text was serialised and flushed to disk
   * (the slow part, for a big file) is not replaced.
   *
   * A write that fails (a full disk, a read-only folder) throws WaveError WRITE_FAILED and
   * leaves the old file as it was: the caller keeps the journal, which still holds the run.
   */
  write(): boolean {
    if (this.editedByOthers()) return false;
    const started = performance.now();
    addFilledColumns(this.#table);
    let digest = '';
    let unchanged = false;
    let written: FileIdentity | undefined;
    let replaced: boolean;
    try {
      replaced = writeFileAtomic(this.#path, serializeTasksInChunks(this.#table), (temporary, sha256) => {
        if (this.editedByOthers()) return false;
        // The same bytes as the file holds (a finished session run again): it is left as it
        // is, its modification time too, so that a spreadsheet or a watcher sees no change.
        digest = sha256;
        unchanged = digest === this.#writtenHash;
        // Known by the file it renames, not by the path afterwards: a save that lands on the
        // new file between the rename and a look at the path would be taken for our own.
        written = identity(temporary);
        return !unchanged;
      }, this.#write);
    } catch (error) {
      throw new WaveError('WRITE_FAILED', (error as Error).message, { path: this.#path, cause: error });
    }
    if (unchanged) return true;
    if (!replaced) return false;
    this.#written = written;
    this.#writtenHash = digest;
    this.lastWriteAt = performance.now();
    this.lastWriteMs = this.lastWriteAt - started;
    return true;
  }
}

/** SHA-256 of a file's content; undefined when it cannot be read (then it counts as edited). */
function hashOf(path: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch {
    return undefined;
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
