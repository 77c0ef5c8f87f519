import { closeSync, openSync } from 'node:fs';
import { isatty } from 'node:tty';

/** The process's two output streams. */
export type OutputName = 'stdout' | 'stderr';

type LostListener = (name: OutputName, code: string) => void;

/** Streams that failed, with the error code they failed with; nothing is written to them again. */
const kLost = new Map<OutputName, string>();
const kListeners = new Set<LostListener>();
/** The standard descriptors that were terminals when csv-wave started. */
const kTerminalsAtStart = new Set<number>();

/**
 * stdout and stderr can go away under a running command: `csv-wave run s | head -1` closes
 * the pipe (EPIPE), a closed terminal answers EIO, `> /dev/full` ENOSPC. What csv-wave prints
 * is a view of the run; its results go to tasks.csv and the journal. So an output error only
 * drops that stream's output from then on: it never throws, never exits, never ends a run.
 * The bin file calls this once, before anything is written.
 */
export function guardProcessOutput(): void {
  for (const fd of [0, 1, 2]) if (isatty(fd)) kTerminalsAtStart.add(fd);
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].on('error', (error: NodeJS.ErrnoException) => markLost(name, error));
  }
}

/** Writes to stdout or stderr unless that stream has failed; a failure is recorded, not thrown. */
export function writeOutput(name: OutputName, text: string): void {
  if (kLost.has(name)) return;
  try {
    process[name].write(text);
  } catch (error) {
    // A file on a full disk can fail at once rather than through an 'error' event.
    markLost(name, error);
  }
}

/** Calls `listener` once for each stream that fails from now on; returns the unsubscribe. */
export function onOutputLost(listener: LostListener): () => void {
  kListeners.add(listener);
  return () => kListeners.delete(listener);
}

function markLost(name: OutputName, error: unknown): void {
  if (kLost.has(name)) return;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
  kLost.set(name, code);
  for (const listener of kListeners) listener(name, code);
}

/**
 * Node 20 aborts at exit (SIGABRT, and a core file) when it cannot restore the settings of
 * a terminal that hung up: its ResetStdio takes tcsetattr's EIO for a bug. The run is over
 * by then, but its exit code (129 after SIGHUP) would be lost. A standard descriptor that
 * was a terminal and is one no more is pointed at /dev/null first (close, then open takes
 * the lowest free descriptor): Node skips a descriptor that names another file. The bin
 * file calls this last.
 */
export function letGoOfLostTerminal(): void {
  for (const fd of [...kTerminalsAtStart].sort()) {
    if (isatty(fd)) continue;
    try {
      closeSync(fd);
      const reopened = openSync('/dev/null', fd === 0 ? 'r' : 'w');
      if (reopened !== fd) closeSync(reopened);
    } catch {
      // Already closed: Node skips a closed descriptor too.
    }
  }
}
