import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { buildPrevContext } from '../graph/prev-context.js';

/** Statuses a row keeps for the rest of the run: its findings cannot change any more. */
const kFinal: ReadonlySet<string> = new Set(['completed', 'failed', 'skipped']);

interface Held {
  /** The context_from cell it was built from: an interactive task may rewire a task that has not started. */
  contextFrom: string;
  text: string;
  /** Its wave file has it: only the task's own attempts still need it. */
  inWaveFile: boolean;
}

/**
 * The prev_context of each task of a run, built once and shared by the task's requests
 * (every attempt) and its wave file's cell, whichever asks first, so that the two cannot
 * disagree. A text is kept only once every context source is finished: then nothing can
 * change it but a new context_from cell. One built while a source still runs (a source in
 * the task's own wave after an interactive rewiring, under `waves`) is built again when
 * next asked, as each was before: the request then sees the source's findings, the wave
 * file written earlier did not. A text is let go once the task is finished and its wave
 * file written.
 */
export class PrevContexts {
  readonly #lookup: (id: string) => TaskRow | undefined;
  readonly #cap: number;
  readonly #held = new Map<string, Held>();

  constructor(lookup: (id: string) => TaskRow | undefined, cap: number) {
    this.#lookup = lookup;
    this.#cap = cap;
  }

  /** The task's prev_context. */
  of(row: TaskRow): string {
    const held = this.#held.get(row.id);
    if (held !== undefined && held.contextFrom === row.context_from) return held.text;
    const sources = splitList(row.context_from);
    const text = buildPrevContext(sources, this.#lookup, this.#cap);
    const settled = sources.every((id) => kFinal.has(this.#lookup(id)?.status ?? ''));
    if (settled) this.#held.set(row.id, { contextFrom: row.context_from, text, inWaveFile: false });
    else this.#held.delete(row.id);
    return text;
  }

  /** The cells of a wave file for these rows: the texts their requests got, or will get. */
  forWaveFile(rows: readonly TaskRow[]): { row: TaskRow; prevContext: string }[] {
    return rows.map((row) => {
      const prevContext = this.of(row);
      const held = this.#held.get(row.id);
      // A finished task (or one of an earlier run) makes no more requests.
      if (kFinal.has(row.status)) this.#held.delete(row.id);
      else if (held) held.inWaveFile = true;
      return { row, prevContext };
    });
  }

  /** The task finished: no attempt of it follows; under `eager` its wave file may still be to come. */
  finished(id: string): void {
    if (this.#held.get(id)?.inWaveFile) this.#held.delete(id);
  }
}
