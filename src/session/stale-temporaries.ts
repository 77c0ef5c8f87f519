import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../process/process-identity.js';

/**
 * Deletes the temporary files of atomic writes (`tasks.csv.<pid>.tmp`, `wave-<N>.csv.<pid>.tmp`)
 * that a run killed mid-write left in the session folder. Only those of processes that are
 * gone: the caller holds the lock, so no other run is writing. One that cannot be deleted
 * (a read-only folder) is left for a later run, with a warning.
 */
export function removeStaleTemporaries(sessionDir: string, tasksFileName: string, warn: (message: string) => void): void {
  for (const name of readdirSync(sessionDir)) {
    const match = /^(.+\.csv)\.(\d+)\.tmp$/.exec(name);
    if (!match || (match[1] !== tasksFileName && !/^wave-\d+\.csv$/.test(match[1]!))) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || isAlive(pid)) continue;
    try {
      rmSync(join(sessionDir, name), { force: true });
    } catch (error) {
      warn(`Cannot delete ${name}, left by an interrupted run: ${(error as Error).message}`);
    }
  }
}
