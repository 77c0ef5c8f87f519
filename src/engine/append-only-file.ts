import { closeSync, openSync, writeSync } from 'node:fs';

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
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(this.#fd, bytes, offset);
    } catch (error) {
      this.#unwritten = bytes.subarray(offset);
      throw error;
    }
    this.#unwritten = Buffer.alloc(0);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
