import { closeSync, openSync, readFileSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { writeAll } from './write-all.js';

/** How long a lock may go untouched before another process takes it (its holder refreshes it a third as often). */
const kStaleMs = 60_000;
/** How long to wait for a lock before giving up. */
const kWaitMs = 300_000;

/** The holders in this process, by lock path: one at a time, in order, without polling the file. */
const queues = new Map<string, Promise<unknown>>();

/**
 * Runs `use` while holding the lock file `path`, across the threads and processes of this
 * machine: made with O_EXCL, holding `<pid>\n<host>\n`, removed when `use` settles. A lock
 * whose process is gone (same host) or that nobody touched for a minute is taken over; a
 * holder touches its lock every 20 s, so that a long hold is not taken for a dead one.
 * Within one process, holders queue in memory and only the first of them waits on the file.
 */
export function withFileLock<T>(path: string, use: () => Promise<T>): Promise<T> {
  const before = queues.get(path) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(async () => {
    await acquire(path);
    const touch = setInterval(() => {
      try {
        const now = new Date();
        utimesSync(path, now, now);
      } catch {
        // Gone: taken over after all; the holder's work is serialized by git's own locks then.
      }
    }, kStaleMs / 3);
    touch.unref();
    try {
      return await use();
    } finally {
      clearInterval(touch);
      release(path);
    }
  });
  const tail = run.catch(() => undefined);
  queues.set(path, tail);
  void tail.then(() => {
    if (queues.get(path) === tail) queues.delete(path);
  });
  return run;
}

async function acquire(path: string): Promise<void> {
  const deadline = Date.now() + kWaitMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeAll(fd, `${process.pid}\n${hostname()}\n`);
      } finally {
        closeSync(fd);
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (isStale(path)) {
      release(path);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${path} has been held by another process for over ${kWaitMs / 1000} s; remove it if no csv-wave runs`);
    await new Promise((resolve) => setTimeout(resolve, wait * (0.5 + Math.random())));
  }
}

function isStale(path: string): boolean {
  let text: string;
  let mtimeMs: number;
  try {
    text = readFileSync(path, 'utf8');
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return false; // gone already: the next try takes it
  }
  const [pidText = '', host = ''] = text.split('\n');
  const pid = Number(pidText);
  if (host === hostname() && Number.isSafeInteger(pid) && pid > 0 && !isAlive(pid)) return true;
  return Date.now() - mtimeMs > kStaleMs;
}

function release(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
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
