import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { procStatFields } from '../../process/proc-stat.js';

/**
 * The process groups of the commands this process started for a session: the children of
 * `parents` (this process, and the launcher processes that spawn commands for it, see
 * launcher.ts) that lead a group of their own (the command executor starts each command
 * detached, whatever process or thread started it) and whose environment names the session
 * (`CSV_WAVE_SESSION`), so that a program embedding csv-wave keeps its own children.
 * Read from /proc on Linux; elsewhere from `ps`, which cannot show the environment of a
 * process, so there every child leading its own group counts. With `taskId`, only the
 * commands of that task (`CSV_WAVE_TASK_ID`; none where the environment cannot be read).
 */
export function childProcessGroups(sessionDir: string, taskId?: string, parents: readonly number[] = [process.pid]): number[] {
  const groups: number[] = [];
  const session = realPath(sessionDir);
  for (const { pid, ppid, pgid } of processTable()) {
    if (parents.includes(ppid) && pgid === pid && runsFor(pid, session, taskId)) groups.push(pid);
  }
  return groups;
}

/**
 * Kills the process groups of the commands this process started for a session (their
 * grandchildren included) and looks again until none is left: a command being spawned
 * when the first look was taken may show up a moment later. Returns how many it killed.
 * With `taskId`, only the commands of that task; `parents` as in childProcessGroups.
 */
export async function killChildProcessGroups(
  sessionDir: string,
  rounds = 10,
  taskId?: string,
  parents: readonly number[] = [process.pid],
): Promise<number> {
  let killed = 0;
  for (let round = 0; round < rounds; round++) {
    const groups = childProcessGroups(sessionDir, taskId, parents);
    if (groups.length === 0 && round > 0) break;
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
        killed++;
      } catch {
        // The group ended by itself in between.
      }
    }
    await sleep(20);
  }
  return killed;
}

/**
 * Kills what commands of an earlier run of this session left running (a run killed with
 * SIGKILL cannot end its own commands): every process whose environment names the session,
 * with its process group. The caller holds the session lock, so no live run owns them.
 * Linux only (/proc); elsewhere the environment of a process cannot be read, and nothing
 * is killed. Returns how many process groups it ended.
 */
export function killLeftoverCommands(sessionDir: string): number {
  const groups = new Set(sessionCommands(sessionDir).map(({ pgid }) => pgid));
  let killed = 0;
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
      killed++;
    } catch {
      // Ended by itself in between.
    }
  }
  return killed;
}

/**
 * Processes other than this one whose environment names the session (Linux; none
 * elsewhere), and `taskId` when it is given.
 */
export function sessionCommands(sessionDir: string, taskId?: string): ProcessEntry[] {
  if (!existsSync('/proc/self/environ')) return [];
  const session = realPath(sessionDir);
  return processTable().filter(({ pid, pgid }) => pid !== process.pid && pgid !== process.pid && runsFor(pid, session, taskId));
}

/**
 * Kills the processes of one attempt of a task wherever they are, with their process
 * groups: those whose environment names the session, the task and the attempt. For the
 * commands of a launcher that died: they lost their parent, so they are no one's children
 * any more. Linux only (/proc); elsewhere nothing is found. Returns how many it killed.
 */
export function killTaskCommands(sessionDir: string, taskId: string, attempt: number): number {
  const attemptVariable = `CSV_WAVE_ATTEMPT=${attempt}`;
  let killed = 0;
  for (const { pid, pgid } of sessionCommands(sessionDir, taskId)) {
    if (!environmentOf(pid).includes(attemptVariable)) continue;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // The group ended by itself in between; the process may have left it (setsid).
    }
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // Ended by itself in between.
    }
  }
  return killed;
}

const kSessionVariable = 'CSV_WAVE_SESSION=';
const kTaskVariable = 'CSV_WAVE_TASK_ID=';

/**
 * True when the process's environment says it runs a task of this session (true where it
 * cannot be read), and that task when `taskId` is given (false where it cannot be read: a
 * kill meant for one task must not reach the others). `session` is a real path; the
 * variable holds the path the run that started the command was given, which may go
 * through a symlink: compared as real paths.
 */
function runsFor(pid: number, session: string, taskId?: string): boolean {
  if (!existsSync('/proc/self/environ')) return taskId === undefined;
  const variables = environmentOf(pid);
  if (taskId !== undefined && !variables.includes(`${kTaskVariable}${taskId}`)) return false;
  const entry = variables.find((variable) => variable.startsWith(kSessionVariable));
  return entry !== undefined && realPath(entry.slice(kSessionVariable.length)) === session;
}

/** The environment of a process, one `NAME=value` each; none when it is gone or not ours to read. */
function environmentOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** The path with every symlink resolved; as given, made absolute, when it no longer exists. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
}

function processTable(): ProcessEntry[] {
  if (existsSync('/proc/self/stat')) {
    const entries: ProcessEntry[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const fields = procStatFields(name);
      if (fields === undefined) continue; // the process ended while the table was read
      entries.push({ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]) });
    }
    return entries;
  }
  try {
    const text = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8' });
    return text
      .split('\n')
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter((fields) => fields.length === 3 && fields.every(Number.isInteger))
      .map(([pid, ppid, pgid]) => ({ pid: pid!, ppid: ppid!, pgid: pgid! }));
  } catch {
    return [];
  }
}
