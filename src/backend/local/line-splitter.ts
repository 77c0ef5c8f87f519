/**
 * Cuts a byte stream into lines: the framing of the launcher's pipes, where each message
 * is one line of JSON (JSON text never holds a raw newline). A line may come in many
 * chunks, and a chunk may hold many lines; the unfinished end waits for the next chunk.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  /** The start of a line whose end has not come yet. */
  #partial: Buffer[] = [];

  constructor(onLine: (line: string) => void) {
    this.#onLine = onLine;
  }

  push(chunk: Buffer): void {
    let start = 0;
    let end = chunk.indexOf(10);
    while (end >= 0) {
      const piece = chunk.subarray(start, end);
      if (this.#partial.length === 0) {
        this.#onLine(piece.toString('utf8'));
      } else {
        // Decoded once whole, so that a character split across two chunks stays whole.
        this.#partial.push(piece);
        const line = Buffer.concat(this.#partial).toString('utf8');
        this.#partial = [];
        this.#onLine(line);
      }
      start = end + 1;
      end = chunk.indexOf(10, start);
    }
    if (start < chunk.length) this.#partial.push(chunk.subarray(start));
  }

  /** True when a line was begun and not finished (the stream ended in the middle of a message). */
  get pending(): boolean {
    return this.#partial.length > 0;
  }
}
