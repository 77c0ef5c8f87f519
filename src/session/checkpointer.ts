import type { RunEmitter } from '../events/events.js';
import type { Journal } from './journal.js';
import type { TasksWriter } from './tasks-writer.js';

/** tasks.csv is rewritten at least this far apart while tasks finish (wave ends included). */
const kMinCheckpointMs = 1000;
/** …and further apart for a big file: writing it takes at most 1/20 of the time. */
const kCheckpointShare = 20;

export interface CheckpointerHandlers {
  /** Someone else saved tasks.csv: called once; nothing is written over their edit. */
  edited: () => void;
  /** A write into the session failed (read-only, disk full). */
  failed: (error: unknown) => void;
}

/**
 * Shows a run in tasks.csv while it goes: rewritten from memory on a timer, at wave ends
 * and after an interactive task changed the session, and after each rewrite the journal
 * (which held everything since) is emptied. Never over a person's edit.
 */
export class Checkpointer {
  readonly #writer: TasksWriter;
  readonly #journal: Journal;
  readonly #handlers: CheckpointerHandlers;
  #timer: NodeJS.Timeout | undefined;
  #events: RunEmitter | undefined;
  /** True once an edit by someone else was found. */
  edited = false;

  constructor(writer: TasksWriter, journal: Journal, handlers: CheckpointerHandlers) {
    this.#writer = writer;
    this.#journal = journal;
    this.#handlers = handlers;
  }

  /** Writes tasks.csv now; false if a person's edit or a failing write is in the way. */
  readonly checkpoint = (): boolean => {
    try {
      this.#journal.flush();
      if (this.#writer.write()) {
        this.#journal.checkpoint();
        return true;
      }
    } catch (error) {
      this.#handlers.failed(error);
      return false;
    }
    if (!this.edited) {
      this.edited = true;
      this.#handlers.edited();
    }
    return false;
  };

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
   * would otherwise rewrite it back to back (the timer shows them within the spacing). An
   * edit is looked for at every wave end all the same, so that no wave starts over one.
   */
  readonly #onWaveDone = (): void => {
    if (performance.now() - this.#writer.lastWriteAt >= this.#spacing() || this.#writer.editedByOthers()) {
      this.checkpoint();
    }
  };

  /**
   * After the task that changed the session is finished (the same turn of the event loop),
   * so that its result and the rows it added reach tasks.csv together.
   */
  readonly #onTasksChanged = (): void => {
    setImmediate(this.checkpoint);
  };
}
