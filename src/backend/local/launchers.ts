import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { Launcher } from './launcher.js';
import { kEndIfOrphaned } from './launcher-orphan.js';

export interface LaunchersOptions {
  /**
   * A launcher whose parent died kills its running commands and exits (launcher-orphan.ts),
   * instead of letting them run to their end: for a `csv-wave worker`, whose jobs another
   * worker runs again. @default false (a local run's next start ends what a dead run left)
   */
  endCommandsIfOrphaned?: boolean;
}

/**
 * The launcher processes of one backend: a shared one that runs every command attempt,
 * started on the first, and replaced by a fresh one when it dies; and, for an `isolated`
 * attempt (the retry after a launcher died under it), a launcher of its own that runs
 * that attempt alone and exits: a command that kills its launcher dies alone, and the
 * attempts that only shared a launcher with it get through on their retry.
 */
export class Launchers {
  #shared: Launcher | undefined;
  /** Every launcher that may still have children: the shared ones, alive or exiting, and the isolated ones. */
  readonly #live = new Set<Launcher>();
  readonly #args: string[];

  constructor(options: LaunchersOptions = {}) {
    this.#args = options.endCommandsIfOrphaned === true ? [kEndIfOrphaned] : [];
  }

  run(request: AttemptRequest): Promise<AttemptReply> {
    if (request.isolated) {
      const own = this.#start();
      const reply = own.run(request);
      void own.end();
      return reply;
    }
    if (this.#shared === undefined || !this.#shared.usable) this.#shared = this.#start();
    return this.#shared.run(request);
  }

  /** The processes whose children are this backend's commands: this one, and each launcher. */
  parents(): number[] {
    const pids = [process.pid];
    for (const launcher of this.#live) if (launcher.pid !== undefined) pids.push(launcher.pid);
    return pids;
  }

  /**
   * Tells every launcher to exit once its attempts are answered. Waits for those that
   * have none; a busy one (an attempt taken back, its command being ended) exits later,
   * and stays the parent of its commands, which cancelAll finds, until then.
   */
  async close(): Promise<void> {
    this.#shared = undefined;
    await Promise.all([...this.#live].map((launcher) => (launcher.busy === 0 ? launcher.end() : void launcher.end())));
  }

  #start(): Launcher {
    const launcher = new Launcher(undefined, this.#args);
    this.#live.add(launcher);
    void launcher.exited.then(() => this.#live.delete(launcher));
    return launcher;
  }
}
