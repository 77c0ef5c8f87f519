import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { WaveError } from '../errors.js';
import { sessionPathForWrite } from '../knowledge/session-path.js';

/** What link() fails with where a file system has no hard links (some network and FUSE mounts). */
const kNoHardLinks = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

interface LockContent {
  pid: number;
  hostname: string;
  started: string;
}

/**
 * One run per session: `.csv-wave/lock` holds the owner's pid. A lock whose process is
 * gone (a crash, kill -9) is stale and taken over at once, with a warning. A pid check is
 * exact on one machine, where time-based staleness would make a resume right after a
 * crash wait for the lock to age. A lock taken on another machine is never presumed stale.
 */
export class SessionLock {
  readonly #path: string;
  readonly #warn: (message: string) => void;

  private constructor(path: string, warn: (message: string) => void) {
    this.#path = path;
    this.#warn = warn;
  }

  static acquire(sessionDir: string, warn: (message: string) => void): SessionLock {
    const path = sessionPathForWrite(sessionDir, join('.csv-wave', 'lock'));
    for (let attempt = 0; attempt < 2; attempt++) {
      if (createLock(path)) return new SessionLock(path, warn);
      const holder = readLock(path);
      if (holder && holder.hostname !== hostname()) {
        // A pid means nothing on another machine (a session on a shared drive): never guess it is dead.
        throw new WaveError(
          'SESSION_LOCKED',
          `Session is locked by a run on ${holder.hostname} (pid ${holder.pid}, since ${holder.started}): ` +
            `if no run is going there any more, delete ${path} and try again`,
          { path },
        );
      }
      if (holder && isAlive(holder.pid)) {
        throw new WaveError(
          'SESSION_LOCKED',
          `Session is locked by another run (pid ${holder.pid}, since ${holder.started}): wait for it to end, or stop it`,
          { path },
        );
      }
      warn(`Taking over a stale lock${holder ? ` of pid ${holder.pid}, which is no longer running` : ''}`);
      try {
        rmSync(path, { force: true });
      } catch (error) {
        throw new WaveError('IO', `Cannot take over the stale lock ${path}: ${(error as Error).message}`, { path, cause: error });
      }
    }
    throw new WaveError('SESSION_LOCKED', 'Could not take the session lock: another run took it first', { path });
  }

  /**
   * Never throws: a lock that cannot be removed (the folder became read-only) is left
   * behind, and the next run takes it over, its pid being gone.
   */
  release(): void {
    const holder = readLock(this.#path);
    if (holder?.pid !== process.pid) return;
    try {
      rmSync(this.#path, { force: true });
    } catch (error) {
      this.#warn(`Cannot remove the lock ${this.#path} (${(error as Error).message}); the next run takes it over`);
    }
  }
}

/**
 * Creates the lock file with its content in one step: the content goes to a temporary
 * file that is then hard-linked to the lock's name, which fails if the lock exists. A lock
 * created empty and written after would look stale, for an instant, to a second run.
 */
function createLock(path: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  const content = JSON.stringify({ pid: process.pid, hostname: hostname(), started: new Date().toISOString() } satisfies LockContent);
  try {
    writeFileSync(temporary, content);
  } catch (error) {
    throw new WaveError('IO', `Cannot take the session lock: cannot write ${temporary}: ${(error as Error).message}`, {
      path: temporary,
      cause: error,
    });
  }
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (!kNoHardLinks.has(code ?? '')) throw lockError(path, error);
  } finally {
    rmSync(temporary, { force: true });
  }
  // A file system without hard links: create exclusively, then write (the short window again).
  try {
    writeFileSync(path, content, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw lockError(path, error);
  }
}

function lockError(path: string, error: unknown): WaveError {
  return new WaveError('IO', `Cannot take the session lock ${path}: ${(error as Error).message}`, { path, cause: error });
}

/**
 * True while a run holds the session's lock: its process is alive, or it runs on another
 * machine (never presumed dead, as in acquire). Only reads: `status` uses it to tell a
 * running task from one a killed run left `in_progress`.
 */
export function runHoldsLock(sessionDir: string): boolean {
  const holder = readLock(join(sessionDir, '.csv-wave', 'lock'));
  if (typeof holder?.pid !== 'number') return false;
  return holder.hostname !== hostname() || isAlive(holder.pid);
}

function readLock(path: string): LockContent | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockContent;
  } catch {
    return undefined;
  }
}

/** True when a process of this pid runs on this machine (whoever owns it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
