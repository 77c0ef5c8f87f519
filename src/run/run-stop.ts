import type { StopReason } from '../events/events.js';
import type { WorkerReply } from '../executors/messages.js';
import { InFlight } from './in-flight.js';
import { writeStopReason, type RunEnding } from './run-outcome.js';

/** A stop asked for: what and why. */
export interface StopRequest {
  stopped: StopReason;
  reason: string;
}

/** What a stop reaches once the run's scheduler exists (Scheduler). */
export interface Stoppable {
  /** Stops starting tasks. */
  stop(reason: StopReason, explanation: string): void;
  /** Puts tasks taken back to pending: the run ends once nothing else is out. */
  takeBack(ids: readonly string[]): void;
}

/**
 * How a run ends early, in one place: every stop (a halt, a spent budget, a signal, a save
 * of tasks.csv that cannot be merged, a failed write, a backend that lost its tasks) goes
 * through here. The scheduler only needs to stop starting tasks; the reason given first is the one the run
 * reports. A stop asked for before the scheduler exists reaches it once it does.
 *
 * A write into the session folder that fails (it became read-only, the disk is full)
 * stops the run like a halt: no new task, running ones finish into the journal, which
 * stays open and writable. Nothing is thrown from a timer or an event handler.
 */
export class RunStop {
  readonly #path: string;
  readonly #warn: (message: string) => void;
  #first: StopRequest | undefined;
  #scheduler: Stoppable | undefined;
  #writeProblem: string | undefined;
  /**
   * The tasks handed out that have not come back: a stop that cannot wait for them takes
   * them back. Only the scheduler hands tasks out, so none is out before it is attached.
   */
  readonly inFlight = new InFlight((ids) => this.#scheduler?.takeBack(ids));

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
    this.#scheduler?.stop(reason, explanation);
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

  /** The session's budget is spent (`reached` says which limit): a halt, saying how to go on. */
  readonly budgetReached = (reached: string): void => {
    this.stop('halt', `Halted: ${reached}; no new tasks were started. Raise the budget and run \`csv-wave resume ${this.#path}\` to go on.`);
  };

  /**
   * The backend can no longer bring back the tasks out (Redis away too long, another run
   * took the session over): stopped like a failed write, and the tasks out go back to
   * pending at once. `explanation` is the backend's, with what to do.
   */
  readonly backendLost = (explanation: string): void => {
    this.stop('io', explanation);
    this.inFlight.takeBackAll();
  };

  /**
   * Whether a reply is kept (false: its task is taken back). A task that could not write
   * its own files into the session (class io) stops the run like a failed rewrite of
   * tasks.csv. Once the session cannot be written, a task that comes back failed may have
   * failed for that reason alone: it goes back to pending.
   */
  readonly keeps = (reply: WorkerReply): boolean => {
    if (reply.kind === 'error' && reply.errorClass === 'io') this.writeFailed(new Error(reply.error));
    return this.#writeProblem === undefined || reply.kind !== 'error';
  };

  /**
   * How the run ended, from how the scheduler did. A run that ended on tasks taken back
   * tells the first stop asked for (RunFacts.ended), even when the scheduler had stopped
   * on its own before (a halt, then a signal).
   */
  ending(scheduled: RunEnding): RunEnding {
    return this.inFlight.tookBack ? (this.#first ?? scheduled) : scheduled;
  }

  /** From now on a stop reaches `scheduler`, which is told at once of one asked for before. */
  attach(scheduler: Stoppable): void {
    this.#scheduler = scheduler;
    if (this.#first) scheduler.stop(this.#first.stopped, this.#first.reason);
  }
}
