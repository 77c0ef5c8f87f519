import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { WaveError } from '../errors.js';
import { engineDir } from './journal.js';

interface LockContent {
  pid: number;
  hostname: string;
  started: string;
}

/**
 * One run per session: `.csv-wave/lock` holds the owner's pid. A lock whose process is
 * gone (a crash, kill -9) is stale and taken over at once, with a warning. A pid check is
 * exact on one machine, where time-based staleness would make a resume right after a
 * crash wait for the lock to age.
 */
export class SessionLock {
  readonly #path: string;

  private constructor(path: string) {
    this.#path = path;
  }

  static acquire(sessionDir: string, warn: (message: string) => void): SessionLock {
    mkdirSync(engineDir(sessionDir), { recursive: true });
    const path = join(engineDir(sessionDir), 'lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        const content: LockContent = { pid: process.pid, hostname: hostname(), started: new Date().toISOString() };
        writeSync(fd, JSON.stringify(content));
        closeSync(fd);
        return new SessionLock(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readLock(path);
      if (holder && holder.hostname === hostname() && isAlive(holder.pid)) {
        throw new WaveError(
          'SESSION_LOCKED',
          `Session is locked by another run (pid ${holder.pid}, since ${holder.started}): wait for it to end, or stop it`,
          { path },
        );
      }
      warn(`Taking over a stale lock${holder ? ` of pid ${holder.pid}, which is no longer running` : ''}`);
      rmSync(path, { force: true });
    }
    throw new WaveError('SESSION_LOCKED', 'Could not take the session lock: another run took it first', { path });
  }

  release(): void {
    const holder = readLock(this.#path);
    if (holder?.pid === process.pid) rmSync(this.#path, { force: true });
  }
}

function readLock(path: string): LockContent | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockContent;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
