import { closeSync, ftruncateSync, openSync } from 'node:fs';
import { IncompleteWrite, writeAll } from '../files/write-all.js';

/**
 * A file opened once for appending, whose writes never tear or double a line: bytes a
 * failed write left unwritten (a full disk) go first at the next write. Kept open, so
 * that a session folder made read-only during a run does not stop it.
 */
export class AppendOnlyFile {
  readonly #fd: number;
  #unwritten = Buffer.alloc(0);

  constructor(path: string) {
    this.#fd = openSync(path, 'a');
  }

  /** Appends `text` after what is left from a failed write; throws when the write fails (the rest is kept). */
  write(text: string): void {
    if (text === '' && this.#unwritten.length === 0) return;
    const bytes = Buffer.concat([this.#unwritten, Buffer.from(text, 'utf8')]);
    try {
      writeAll(this.#fd, bytes);
    } catch (error) {
      // A write that made no progress (a full disk) throws too, rather than looping.
      this.#unwritten = error instanceof IncompleteWrite ? bytes.subarray(error.written) : bytes;
      throw error;
    }
    this.#unwritten = Buffer.alloc(0);
  }

  /** Empties the file, and drops what a failed write left: it is no longer to be written. */
  truncate(): void {
    this.#unwritten = Buffer.alloc(0);
    ftruncateSync(this.#fd, 0);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
