import type { StopReason } from '../events/events.js';
import { writeStopReason } from './run-outcome.js';

/** A stop asked for: what and why. */
export interface StopRequest {
  stopped: StopReason;
  reason: string;
}

/**
 * How a run ends early. The scheduler only needs to stop starting tasks; the reason given
 * first is the one the run reports. A stop asked for before the scheduler exists reaches
 * it once it does.
 *
 * A write into the session folder that fails (it became read-only, the disk is full)
 * stops the run like a halt: no new task, running ones finish into the journal, which
 * stays open and writable. Nothing is thrown from a timer or an event handler.
 */
export class RunStop {
  readonly #path: string;
  readonly #warn: (message: string) => void;
  #first: StopRequest | undefined;
  #stopScheduler: (reason: StopReason, explanation: string) => void = () => {};
  #writeProblem: string | undefined;

  /** @param path the session as the user named it, for the command the reason suggests */
  constructor(path: string, warn: (message: string) => void) {
    this.#path = path;
    this.#warn = warn;
  }

  /** The first stop asked for, if any. */
  get first(): StopRequest | undefined {
    return this.#first;
  }

  /** What the session folder first refused to write, if it did. */
  get writeProblem(): string | undefined {
    return this.#writeProblem;
  }

  readonly stop = (reason: StopReason, explanation: string): void => {
    this.#first ??= { stopped: reason, reason: explanation };
    this.#stopScheduler(reason, explanation);
  };

  readonly writeFailed = (error: unknown): void => {
    if (this.#writeProblem !== undefined) return;
    this.#writeProblem = error instanceof Error ? error.message : String(error);
    this.#warn(`${this.#writeProblem}: no new task will start; running tasks finish into the journal`);
    this.stop('io', writeStopReason(this.#writeProblem, this.#path, false));
  };

  /** Runs `work`; a write it fails with stops the run instead of being thrown. */
  readonly guarded = (work: () => void): void => {
    try {
      work();
    } catch (error) {
      this.writeFailed(error);
    }
  };

  /** From now on a stop reaches `scheduler`, which is told at once of one asked for before. */
  attach(scheduler: { stop(reason: StopReason, explanation: string): void }): void {
    this.#stopScheduler = (reason, explanation) => scheduler.stop(reason, explanation);
    if (this.#first) scheduler.stop(this.#first.stopped, this.#first.reason);
  }
}
