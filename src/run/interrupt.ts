export interface InterruptOptions {
  /** Aborted: no new task starts, and running ones get the grace to finish. */
  signal?: AbortSignal | undefined;
  /** Aborted: the grace ends at once. */
  killSignal?: AbortSignal | undefined;
  graceSeconds: number;
  /** The session as the user named it, for the command the reason suggests. */
  path: string;
  /** Stops starting tasks (RunStop.stop). */
  stop: (reason: 'signal', explanation: string) => void;
  /** Takes back every running task (InFlight.takeBackAll); returns their ids. */
  takeBackAll: () => string[];
  /** Ends the commands of the tasks just taken back. */
  killCommands: () => void;
  warn: (message: string) => void;
}

/**
 * A run's answer to a signal: no new task; the running ones get the grace, then are
 * taken back (they go back to pending) and their commands killed. A kill signal ends
 * the grace at once. Listens from construction until `dispose`.
 */
export class Interrupt {
  readonly #options: InterruptOptions;
  #graceTimer: NodeJS.Timeout | undefined;
  #killed: string[] | undefined;
  #killedAtOnce = false;

  constructor(options: InterruptOptions) {
    this.#options = options;
    const { signal, killSignal } = options;
    if (signal?.aborted) this.#interrupt();
    signal?.addEventListener('abort', this.#interrupt, { once: true });
    if (killSignal?.aborted) this.#interruptNow();
    killSignal?.addEventListener('abort', this.#interruptNow, { once: true });
  }

  /** The ids of the running tasks a signal took back; empty when it took none. */
  get takenBack(): readonly string[] {
    return this.#killed ?? [];
  }

  /**
   * The run's reason once running tasks were taken back, naming them and whether they had
   * the grace; undefined when none was (the first words of the stop stand).
   */
  reason(): string | undefined {
    const killed = this.#killed;
    if (!killed || killed.length === 0) return undefined;
    return (
      `Interrupted: no new task was started; ` +
      (this.#killedAtOnce
        ? `the ${killed.length} running task(s) (${killed.join(', ')}) were stopped at once and put back to pending. `
        : `running tasks had ${this.#options.graceSeconds}s to finish, and the ${killed.length} that had not (${killed.join(', ')}) ` +
          `were stopped and put back to pending. `) +
      `Run \`csv-wave resume ${this.#options.path}\` to go on.`
    );
  }

  /** Stops listening and ends the grace timer: the run is over. */
  dispose(): void {
    this.#options.signal?.removeEventListener('abort', this.#interrupt);
    this.#options.killSignal?.removeEventListener('abort', this.#interruptNow);
    clearTimeout(this.#graceTimer);
  }

  readonly #interrupt = (): void => {
    this.#options.stop(
      'signal',
      `Interrupted: no new task was started; running tasks were let finish and recorded. ` +
        `Run \`csv-wave resume ${this.#options.path}\` to go on.`,
    );
    this.#graceTimer ??= setTimeout(() => this.#killRunning(false), this.#options.graceSeconds * 1000);
  };

  readonly #interruptNow = (): void => {
    this.#interrupt();
    this.#killRunning(true);
  };

  #killRunning(atOnce: boolean): void {
    if (this.#killed) return;
    this.#killedAtOnce = atOnce;
    this.#killed = this.#options.takeBackAll();
    if (this.#killed.length > 0) {
      this.#options.warn(`Stopped ${this.#killed.length} running task(s) (${this.#killed.join(', ')}); they are pending again`);
      this.#options.killCommands();
    }
  }
}
