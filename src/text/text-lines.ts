/** Characters of one line an agent CLI's event stream may take: a longer one is dropped, not held. */
export const kMaxEventLineChars = 64 * 1024 * 1024;

/**
 * Cuts a text stream into lines as its chunks come (a line may come in many chunks, a chunk
 * may hold many lines). A line longer than `maxChars` is dropped as it grows, never held
 * whole: a program that prints without end costs its memory once, not the run's. The
 * agent executors read their CLI's JSON events on the run's main thread through it.
 */
export class TextLines {
  readonly #onLine: (line: string) => void;
  readonly #maxChars: number;
  /** The pieces of the line whose end has not come yet. */
  #parts: string[] = [];
  #length = 0;
  #overlong = false;
  /** Lines dropped for their length. */
  dropped = 0;

  constructor(onLine: (line: string) => void, maxChars = kMaxEventLineChars) {
    this.#onLine = onLine;
    this.#maxChars = maxChars;
  }

  push(chunk: string): void {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end >= 0; end = chunk.indexOf('\n', start)) {
      this.#add(chunk.slice(start, end));
      this.#finish();
      start = end + 1;
    }
    if (start < chunk.length) this.#add(start === 0 ? chunk : chunk.slice(start));
  }

  /** The stream ended: a last line without its newline is a line too. */
  end(): void {
    if (this.#length > 0 || this.#overlong) this.#finish();
  }

  #add(piece: string): void {
    if (this.#overlong) return;
    if (this.#length + piece.length > this.#maxChars) {
      this.#overlong = true;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(piece);
    this.#length += piece.length;
  }

  #finish(): void {
    if (this.#overlong) {
      this.#overlong = false;
      this.dropped++;
      return;
    }
    const line = this.#parts.length === 1 ? this.#parts[0]! : this.#parts.join('');
    this.#parts = [];
    this.#length = 0;
    this.#onLine(line);
  }
}
