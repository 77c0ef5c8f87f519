import { createHash } from 'node:crypto';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { WaveError } from '../errors.js';
import { sessionPathForWrite } from '../files/session-path.js';
import { ownerStateOf, ownIdentity, type OwnerState, type ProcessOwner } from '../process/process-identity.js';
import { kLayout } from '../layout.js';

/** What link() fails with where a file system has no hard links (some network and FUSE mounts). */
const kNoHardLinks = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
/**
 * Tries at taking the lock. Each try that fails saw a lock change under it (released, or
 * taken over by another run); that many in a row means other runs are racing for it.
 */
const kAttempts = 10;
/** Claims on claims: a takeover whose claimant died, whose own takeover's claimant died, … */
const kMaxClaimDepth = 3;

interface LockContent extends ProcessOwner {
  started: string;
}

/** The locks this process holds, by path, with their exact content: a lock naming this pid but not here is a dead namesake's. */
const heldHere = new Map<string, string>();

/**
 * One run per session: `.csv-wave/lock` holds the owner's pid, host, boot, pid namespace
 * and start time. A lock whose process is gone (a crash, kill -9) is stale and taken over
 * at once, with a warning. A pid check is exact on one machine, where time-based staleness
 * would make a resume right after a crash wait for the lock to age; the start time and the
 * boot tell a live process that got the dead owner's pid (a container's run is pid 1 every
 * time) from the owner. A lock taken on another machine, or in another pid namespace, is
 * never presumed stale: its pid cannot be checked from here.
 */
export class SessionLock {
  readonly #path: string;
  readonly #content: string;
  readonly #warn: (message: string) => void;

  private constructor(path: string, content: string, warn: (message: string) => void) {
    this.#path = path;
    this.#content = content;
    this.#warn = warn;
    heldHere.set(path, content);
  }

  static acquire(sessionDir: string, warn: (message: string) => void): SessionLock {
    const path = sessionPathForWrite(sessionDir, kLayout.lock);
    const content = ownContent();
    let warned = false;
    for (let attempt = 0; attempt < kAttempts; attempt++) {
      if (createLock(path, content)) return new SessionLock(path, content, warn);
      const raw = readRaw(path);
      if (raw === undefined) continue; // released or taken over in between: try again
      const holder = parseLock(raw);
      const state = ownerState(path, raw, holder);
      if (state !== 'gone') throw lockedError(path, holder!, state);
      if (!warned) {
        warn(`Taking over a stale lock${holder ? ` of pid ${holder.pid}, which is no longer running` : ''}`);
        warned = true;
      }
      removeIfStill(path, raw, content, 0);
    }
    throw new WaveError('SESSION_LOCKED', 'Could not take the session lock: another run took it first', { path });
  }

  /**
   * Never throws: a lock that cannot be removed (the folder became read-only) is left
   * behind, and the next run takes it over, its owner being gone.
   */
  release(): void {
    heldHere.delete(this.#path);
    try {
      if (readRaw(this.#path) !== this.#content) return;
      rmSync(this.#path, { force: true });
    } catch (error) {
      this.#warn(`Cannot remove the lock ${this.#path} (${(error as Error).message}); the next run takes it over`);
    }
  }
}

function ownContent(): string {
  return JSON.stringify({
    pid: process.pid,
    hostname: hostname(),
    started: new Date().toISOString(),
    ...ownIdentity(),
  } satisfies LockContent);
}

function ownerState(path: string, raw: string, holder: LockContent | undefined): OwnerState {
  if (!holder) return 'gone'; // torn by a crash while it was written (only where there are no hard links)
  // This pid is this process, which knows which locks it holds.
  return ownerStateOf(holder, () => heldHere.get(path) === raw);
}

function lockedError(path: string, holder: LockContent, state: Exclude<OwnerState, 'gone'>): WaveError {
  const since = `pid ${holder.pid}, since ${holder.started}`;
  switch (state) {
    case 'other-host':
      // A pid means nothing on another machine (a session on a shared drive): never guess it is dead.
      return new WaveError(
        'SESSION_LOCKED',
        `Session is locked by a run on ${holder.hostname} (${since}): ` +
          `if no run is going there any more, delete ${path} and try again`,
        { path },
      );
    case 'other-namespace':
      return new WaveError(
        'SESSION_LOCKED',
        `Session is locked by a run in another pid namespace on this machine (a container; ${since} there, ${holder.pidNamespace}), ` +
          `which cannot be checked from here: if no run is going there any more, delete ${path} and try again`,
        { path },
      );
    case 'running':
      return new WaveError(
        'SESSION_LOCKED',
        `Session is locked by another run (${since}): wait for it to end, or stop it`,
        { path },
      );
  }
}

/**
 * Deletes the stale lock at `path` if it still holds `stale`, and only then. Deleting it by
 * name is not enough: of two runs that read the same stale lock, the slower one would delete
 * the lock the faster one had just taken, and both would run. So a takeover first claims
 * that stale content: the claim is a file named after the content and created exclusively,
 * so only one process takes over one stale lock, and it compares before it deletes. No one
 * else deletes a lock whose owner is gone, so the lock cannot change between the compare and
 * the delete. A claim whose claimant died in the middle is itself taken over the same way.
 */
function removeIfStill(path: string, stale: string, content: string, depth: number): void {
  const claim = `${path}.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 16)}`;
  if (!createLock(claim, content)) {
    const claimant = readRaw(claim);
    // Another process is taking it over; the next try sees the outcome.
    if (claimant === undefined || depth >= kMaxClaimDepth || ownerState(claim, claimant, parseLock(claimant)) !== 'gone') return;
    removeIfStill(claim, claimant, content, depth + 1);
    return;
  }
  try {
    if (readRaw(path) === stale) rmSync(path, { force: true });
  } catch (error) {
    throw new WaveError('IO', `Cannot take over the stale lock ${path}: ${(error as Error).message}`, { path, cause: error });
  } finally {
    rmSync(claim, { force: true });
  }
}

/**
 * Creates the lock file with its content in one step: the content goes to a temporary
 * file that is then hard-linked to the lock's name, which fails if the lock exists. A lock
 * created empty and written after would look stale, for an instant, to a second run.
 */
function createLock(path: string, content: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
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

/** The lock file's exact text; undefined when there is none. */
function readRaw(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // Not a file, or not ours to read: nothing to take over, and nothing to guess.
    throw new WaveError('IO', `Cannot read the session lock ${path}: ${(error as Error).message}; remove it if no run holds it`, {
      path,
      cause: error,
    });
  }
}

function parseLock(raw: string): LockContent | undefined {
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { pid, hostname: host } = value as Partial<LockContent>;
    if (!Number.isSafeInteger(pid) || typeof host !== 'string') return undefined;
    return value as LockContent;
  } catch {
    return undefined;
  }
}

/**
 * True while a run holds the session's lock, judged as `acquire` judges it (a live owner,
 * or one on another machine or in another pid namespace, never presumed dead). Only
 * reads: `status` uses it to tell a running task from one a killed run left `in_progress`.
 */
export function runHoldsLock(sessionDir: string): boolean {
  const path = join(sessionDir, kLayout.lock);
  let raw: string | undefined;
  try {
    raw = readRaw(path);
  } catch {
    return true; // a lock that cannot be read is not ours to call stale
  }
  return raw !== undefined && ownerState(path, raw, parseLock(raw)) !== 'gone';
}
