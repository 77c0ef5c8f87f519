import type { AttemptRequest } from '../../executors/messages.js';
import { killChildProcessGroups } from './child-groups.js';

/** The launcher's argument that turns the watch on (launchers.ts passes it for a worker's backend). */
export const kEndIfOrphaned = '--end-commands-if-orphaned';

/** How often a launcher whose stdin ended looks whether its parent is gone. */
const kWatchMs = 100;

export interface Orphaning {
  /** Called when stdin ends: from then on, a parent gone ends the commands and the process. */
  watch(): void;
  /** Kills the process groups of the running commands, then exits. */
  endCommands(): Promise<void>;
}

/**
 * The end of a launcher whose parent died (kill -9 of a `csv-wave worker`). Its stdin ends
 * first; then the kernel gives it a new parent (init or a subreaper), which is how it tells
 * a dead parent from one that closed the backend and waits for the last replies. The
 * process is not kept alive for the watch: once its attempts are answered it exits as before.
 */
export function watchForOrphaning(running: ReadonlyMap<string, AttemptRequest>): Orphaning {
  const parent = process.ppid;
  let ending = false;
  const endCommands = async (): Promise<void> => {
    if (ending) return;
    ending = true;
    // Only this process's own children: another worker may run the same attempt (its job, redelivered).
    for (const request of running.values()) await killChildProcessGroups(request.task.session, 3, request.task.id, [process.pid]);
    process.exit(1);
  };
  const orphaned = (): boolean => process.ppid !== parent;
  return {
    watch() {
      if (orphaned()) {
        void endCommands();
        return;
      }
      const timer = setInterval(() => {
        if (!orphaned()) return;
        clearInterval(timer);
        void endCommands();
      }, kWatchMs);
      timer.unref();
    },
    endCommands,
  };
}
