import type { RunEmitter } from '../events/events.js';
import type { TasksTable } from '../csv/tasks-table.js';
import type { ReadOptions } from '../csv/parse-tasks.js';
import type { WaveError } from '../errors.js';
import type { Journal } from './journal.js';
import type { TasksWriter } from './tasks-writer.js';

/** tasks.csv is rewritten at least this far apart while tasks finish (wave ends included). */
const kMinCheckpointMs = 1000;
/** …and further apart for a big file: writing it takes at most 1/20 of the time. */
const kCheckpointShare = 20;
/** Saves merged in one checkpoint at most: a file saved again and again is merged at the next. */
const kMergesPerCheckpoint = 3;

export interface CheckpointerHandlers {
  /**
   * Someone else saved tasks.csv: the save, read with its text, to merge into the run
   * (session/edits/). tasks.csv is written right after, with it.
   */
  merge: (saved: TasksTable) => void;
  /** Whether a save can be merged now; false while the run's scheduler is in the middle of an event (it is merged in the next turn). */
  canMerge: () => boolean;
  /**
   * A save that cannot be merged (gone, not CSV, a required column lost), twice in a row:
   * called once; nothing is written over it any more.
   */
  unmergeable: (problem: WaveError) => void;
  /** A write into the session failed (read-only, disk full). */
  failed: (error: unknown) => void;
}

/**
 * Shows a run in tasks.csv while it goes: rewritten from memory on a timer, at wave ends
 * and after an interactive task changed the session, and after each rewrite the journal
 * (which held everything since) is emptied. Never over a person's save it has not read: a
 * save is read and merged into the run first, then tasks.csv is written with it.
 */
export class Checkpointer {
  readonly #writer: TasksWriter;
  readonly #journal: Journal;
  readonly #handlers: CheckpointerHandlers;
  readonly #read: ReadOptions;
  #timer: NodeJS.Timeout | undefined;
  #events: RunEmitter | undefined;
  /** A checkpoint is under way: a wave end it causes (a merge that skips tasks) does not start another. */
  #busy = false;
  /** The bytes of a save that could not be read once: looked at again before giving up (a program may have been writing it). */
  #suspect: string | undefined;
  /** True once a save that cannot be merged was found: tasks.csv is not written again. */
  unmergeable = false;

  constructor(writer: TasksWriter, journal: Journal, handlers: CheckpointerHandlers, read: ReadOptions = {}) {
    this.#writer = writer;
    this.#journal = journal;
    this.#handlers = handlers;
    this.#read = read;
  }

  /**
   * Writes tasks.csv now, after merging a save found there; false if a save that cannot be
   * merged, one still being written, or a failing write is in the way. `final`: the run's
   * last write, which looks at a save that could not be read only once more.
   */
  readonly checkpoint = (final = false): boolean => {
    if (this.unmergeable || this.#busy) return false;
    this.#busy = true;
    try {
      this.#journal.flush();
      for (let merges = 0; merges <= kMergesPerCheckpoint; merges++) {
        if (this.#writer.editedByOthers()) {
          if (merges === kMergesPerCheckpoint) return false;
          if (!this.#handlers.canMerge()) {
            setImmediate(this.checkpoint);
            return false;
          }
          if (!this.#takeSaved(final)) return false;
        }
        if (this.#writer.write()) {
          this.#journal.checkpoint();
          return true;
        }
        // Saved again while the new text was written: merged in the next round.
      }
      return false;
    } catch (error) {
      this.#handlers.failed(error);
      return false;
    } finally {
      this.#busy = false;
    }
  };

  /** At an edit point of the run (before a wave opens, before the run ends): a save waiting there is merged now. */
  readonly atEditPoint = (): void => {
    if (!this.unmergeable && this.#writer.editedByOthers()) this.checkpoint();
  };

  /** Reads the save and merges it; false when it cannot be merged (yet). */
  #takeSaved(final: boolean): boolean {
    const saved = this.#writer.readSaved(this.#read);
    if (saved.kind === 'settling') return false;
    if (saved.kind === 'unreadable') {
      // A program may still be writing it (truncated, then written): one more look first.
      if (!final && this.#suspect !== saved.hash) {
        this.#suspect = saved.hash;
        return false;
      }
      this.unmergeable = true;
      this.#handlers.unmergeable(saved.error);
      return false;
    }
    this.#suspect = undefined;
    this.#handlers.merge(saved.table);
    return true;
  }

  /** Starts the timer and listens for wave ends and session changes. */
  start(events: RunEmitter): void {
    this.#events = events;
    this.#schedule();
    events.on('wave:done', this.#onWaveDone);
    events.on('tasks:changed', this.#onTasksChanged);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#events?.off('wave:done', this.#onWaveDone);
    this.#events?.off('tasks:changed', this.#onTasksChanged);
  }

  #spacing(): number {
    return Math.max(kMinCheckpointMs, kCheckpointShare * this.#writer.lastWriteMs);
  }

  #schedule(): void {
    this.#timer = setTimeout(() => {
      this.checkpoint();
      this.#schedule();
    }, this.#spacing());
    this.#timer.unref();
  }

  /**
   * A wave end shows at once, unless tasks.csv was just written: short waves of a big file
   * would otherwise rewrite it back to back (the timer shows them within the spacing). A
   * save found then is merged in the next turn (the scheduler is in the middle of the
   * event); one saved before a wave opens was merged at the edit point before it.
   */
  readonly #onWaveDone = (): void => {
    if (performance.now() - this.#writer.lastWriteAt >= this.#spacing()) this.checkpoint();
  };

  /**
   * After the task that changed the session is finished (the same turn of the event loop),
   * so that its result and the rows it added reach tasks.csv together.
   */
  readonly #onTasksChanged = (): void => {
    setImmediate(this.checkpoint);
  };
}
