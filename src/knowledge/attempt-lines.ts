import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout } from '../layout.js';
import { attemptLineSchema, kAttemptOutcomes, type AttemptEnd, type AttemptLine } from '../schema/attempt.js';

const kOutcomes = new Set<string>(kAttemptOutcomes);

/**
 * The fields the report relies on, checked by hand: zod on each of 100,000 lines took
 * most of the report's time. A line that fails this check gets zod's full verdict.
 */
function looksRight(value: unknown): value is AttemptLine {
  if (typeof value !== 'object' || value === null) return false;
  const line = value as Record<string, unknown>;
  return (
    typeof line['run'] === 'string' &&
    typeof line['task'] === 'string' &&
    Number.isInteger(line['attempt']) &&
    Number.isInteger(line['wave']) &&
    typeof line['start'] === 'string' &&
    !Number.isNaN(Date.parse(line['start'])) &&
    typeof line['end'] === 'string' &&
    typeof line['duration_ms'] === 'number' &&
    line['duration_ms'] >= 0 &&
    kOutcomes.has(line['outcome'] as string) &&
    typeof line['error_class'] === 'string' &&
    typeof line['error'] === 'string' &&
    (line['thread'] === null || Number.isInteger(line['thread']))
  );
}

/**
 * Every well-formed line of attempts.ndjson, in file order. A torn last line (a crash
 * mid-write) or a line that is not an attempt is skipped: the file is a log, not an input.
 */
export function readAttempts(sessionDir: string): AttemptLine[] {
  const path = join(sessionDir, kLayout.attempts);
  if (!existsSync(path)) return [];
  return checkedLines(readFileSync(path, 'utf8').split('\n').filter((text) => text !== ''));
}

/**
 * What a report keeps of an attempt line: its times as numbers, the strings that repeat (the
 * run's id, the error class) shared between lines. A whole parsed line held some 400 bytes
 * (its key, host, both times as text…), 400 MB at the end of a million-task run.
 */
export interface AttemptBrief {
  run: string;
  task: string;
  attempt: number;
  startMs: number;
  endMs: number;
  duration_ms: number;
  outcome: AttemptEnd;
  error_class: string;
  thread: number | null;
  cached: boolean;
  saved_usd: number;
}

/** Bytes of attempts.ndjson parsed at a time: the text of a million lines is never held at once. */
const kBlockBytes = 8 << 20;

/**
 * attempts.ndjson read again and again as it grows (a run's report at each wave end), as
 * AttemptBriefs: each read parses only the lines appended since the last, the file being
 * append-only, a block at a time. A file that shrank (replaced, emptied) is read whole again.
 */
export class AttemptLinesReader {
  readonly #path: string;
  #offset = 0;
  #lines: AttemptBrief[] = [];
  /** One copy of each run id and error class, however many lines carry it. */
  readonly #shared = new Map<string, string>();
  readonly #blockBytes: number;

  /** `blockBytes`: bytes parsed at a time (tests pass a few, to cross many block ends). */
  constructor(sessionDir: string, blockBytes = kBlockBytes) {
    this.#path = join(sessionDir, kLayout.attempts);
    this.#blockBytes = blockBytes;
  }

  /** Every well-formed line so far, in file order (the same array, grown: do not change it). */
  read(): AttemptBrief[] {
    let fd: number;
    try {
      fd = openSync(this.#path, 'r');
    } catch {
      return this.#lines;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.#offset) {
        this.#offset = 0;
        this.#lines = [];
      }
      let block = this.#blockBytes;
      while (this.#offset < size) {
        const bytes = Buffer.allocUnsafe(Math.min(block, size - this.#offset));
        const read = readSync(fd, bytes, 0, bytes.length, this.#offset);
        // Only whole lines: a line being written is read next time.
        const end = bytes.lastIndexOf(0x0a, read - 1);
        if (end < 0) {
          // No line end in a whole block: a line longer than a block, read again with a bigger one.
          if (read === bytes.length && this.#offset + read < size) block *= 2;
          else break;
          continue;
        }
        this.#offset += end + 1;
        const texts = bytes.toString('utf8', 0, end).split('\n').filter((text) => text !== '');
        for (const line of checkedLines(texts)) this.#lines.push(this.#brief(line));
      }
      return this.#lines;
    } finally {
      closeSync(fd);
    }
  }

  #brief(line: AttemptLine): AttemptBrief {
    return {
      run: this.#share(line.run),
      task: line.task,
      attempt: line.attempt,
      startMs: Date.parse(line.start),
      endMs: Date.parse(line.end),
      duration_ms: line.duration_ms,
      outcome: kAttemptOutcomes.find((outcome) => outcome === line.outcome)!,
      error_class: this.#share(line.error_class),
      thread: line.thread,
      cached: line.cached === true,
      saved_usd: line.saved_usd ?? 0,
    };
  }

  #share(text: string): string {
    const known = this.#shared.get(text);
    if (known !== undefined) return known;
    this.#shared.set(text, text);
    return text;
  }
}

/** The lines that are attempts, of these texts. */
function checkedLines(texts: readonly string[]): AttemptLine[] {
  const lines: AttemptLine[] = [];
  for (const parsed of parseAll(texts)) {
    if (looksRight(parsed)) {
      lines.push(parsed);
      continue;
    }
    const result = attemptLineSchema.safeParse(parsed);
    if (result.success) lines.push(result.data);
  }
  return lines;
}

/** Every line that is JSON. One JSON.parse of them all is several times faster than one per line; a torn line makes it fail, then each line is parsed alone. */
function parseAll(texts: readonly string[]): unknown[] {
  try {
    const all: unknown = JSON.parse(`[${texts.join(',')}]`);
    // A line like `1,2` would pass as two values: the count must match.
    if (Array.isArray(all) && all.length === texts.length) return all;
  } catch {
    // A torn or broken line: parse them one by one.
  }
  return texts.flatMap((text) => {
    try {
      return [JSON.parse(text) as unknown];
    } catch {
      return [];
    }
  });
}

/** The completed results of a session that came from the result cache, and what they had cost. */
export interface CachedResults {
  /** Tasks whose current result (their latest completed attempt) was taken from the cache. */
  tasks: number;
  /** What those results cost when they were made, in US dollars, as far as it was known. */
  saved_usd: number;
}

/**
 * Of the tasks `completed` names, those whose latest completed attempt came from the cache
 * (`cached: true` in attempts.ndjson), and the sum of their `saved_usd`.
 */
export function cachedResults(lines: readonly Pick<AttemptLine | AttemptBrief, 'task' | 'outcome' | 'cached' | 'saved_usd'>[], completed: ReadonlySet<string> | (() => ReadonlySet<string>)): CachedResults {
  // Most sessions (and every first run) took nothing from the cache: one look at each line.
  if (!lines.some((line) => line.cached === true)) return { tasks: 0, saved_usd: 0 };
  const done = typeof completed === 'function' ? completed() : completed;
  const latest = new Map<string, (typeof lines)[number]>();
  for (const line of lines) if (line.outcome === 'completed') latest.set(line.task, line);
  let tasks = 0;
  let saved = 0;
  for (const [task, line] of latest) {
    if (line.cached !== true || !done.has(task)) continue;
    tasks++;
    saved += line.saved_usd ?? 0;
  }
  return { tasks, saved_usd: saved };
}
