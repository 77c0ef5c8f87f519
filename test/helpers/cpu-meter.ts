import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeEach } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /**
     * CPU time the test used, in ms: this process's threads and the child processes it reaped.
     * On a test file's own task: the whole file's, from its import to its last afterAll.
     */
    cpuMs?: number;
  }
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const kTicksPerSecond = 100;

/**
 * utime + stime + cutime + cstime of this process, in ms, from /proc/self/stat; undefined
 * where there is no /proc. Unlike wall time it hardly grows with the machine's load, so
 * the summary reporter can tell a test that works a lot from one that waits a lot.
 */
function cpuMsSoFar(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name (which may hold spaces) in parentheses: 14-17 are the times.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    return (ticks * 1000) / kTicksPerSecond;
  } catch {
    return undefined;
  }
}

/** A setup file is evaluated again for each test file, just before that file is imported. */
const fileStart = cpuMsSoFar();
let before: number | undefined;

beforeEach(() => {
  before = cpuMsSoFar();
});

afterEach((context) => {
  const now = cpuMsSoFar();
  if (before !== undefined && now !== undefined) context.task.meta.cpuMs = now - before;
});

// Registered before the file's own hooks, so with vitest's stacked hooks it runs after them:
// the file's teardown (a redis-server stopped, a browser closed) counts too. vitest wants the
// first argument (fixtures) destructured; the second is the file's task.
afterAll(({}, file) => {
  const now = cpuMsSoFar();
  if (fileStart !== undefined && now !== undefined) file.meta.cpuMs = now - fileStart;
});
