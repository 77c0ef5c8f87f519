import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { procStatFields } from '../process/proc-stat.js';

/** Rounds of looking: a process found may have started another before it was killed. */
const kRounds = 5;

/** True where a process's environment can be read (/proc of Linux); elsewhere nothing is found. */
export const kCanFindEscaped = existsSync('/proc/self/environ');

/**
 * Kills the processes a command started that left its process group (`setsid`, a daemon),
 * which a kill of the group does not reach: those whose environment holds every one of
 * `marker` (the `CSV_WAVE_*` variables of that one command; children inherit them). Only
 * pids handed out after the command's shell are read, so a run of thousands of commands
 * does not read every process's environment at each exit. Processes that cleared their
 * environment (`env -i`) are not found. Returns how many it killed.
 */
export function killEscapedProcesses(shellPid: number, marker: readonly string[]): number {
  if (!kCanFindEscaped) return 0;
  const killed = new Set<number>();
  for (let round = 0; round < kRounds; round++) {
    // Members of the group were killed with it (they may not have died yet); killed ones likewise.
    const found = newerPids(shellPid).filter(
      (pid) => pid !== process.pid && !killed.has(pid) && carries(pid, marker) && groupOf(pid) !== shellPid && isProcess(pid),
    );
    if (found.length === 0) break;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Ended by itself in between.
      }
    }
  }
  return killed.size;
}

/**
 * Past this many pids handed out since the shell's, /proc is listed rather than probed pid
 * by pid. Listing /proc cost about 0.7 ms on a loaded 2-core box, about the cost of probing
 * 90 pids; a short command's range is its sibling shells and what the rest of the machine
 * started meanwhile, a handful.
 */
const kMaxProbed = 64;

/**
 * The pids of this pid namespace handed out after `pid` (pids wrap around at pid_max)
 * that are still alive. Looked up one by one, these may hold thread ids as well: see isProcess.
 */
function newerPids(pid: number): number[] {
  const last = lastPid();
  // No pid handed out since the shell's: it started nothing (a command that execs, like
  // `true`), and /proc need not be listed (the costliest step of a short command's end).
  if (last === pid) return [];
  // A few pids handed out since (no wrap-around): each is looked up; a missing one ended.
  if (last !== undefined && last > pid && last - pid <= kMaxProbed) {
    const pids: number[] = [];
    for (let candidate = pid + 1; candidate <= last; candidate++) {
      if (existsSync(`/proc/${candidate}`)) pids.push(candidate);
    }
    return pids;
  }
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const candidate = Number(name);
    if (candidate === pid) continue;
    const newer = last === undefined || (last >= pid ? candidate > pid && candidate <= last : candidate > pid || candidate <= last);
    if (newer) pids.push(candidate);
  }
  return pids;
}

/**
 * False for the id of a thread other than its process's first: /proc answers for those
 * too, though it does not list them, and a multi-threaded escaped process would be killed
 * and counted once per thread. A process's first thread has its pid as its Tgid.
 */
function isProcess(id: number): boolean {
  try {
    return /^Tgid:\s*(\d+)$/m.exec(readFileSync(`/proc/${id}/status`, 'utf8'))?.[1] === String(id);
  } catch {
    return false; // ended in between
  }
}

/** The last pid handed out; undefined where it cannot be read (then every process is looked at). */
function lastPid(): number | undefined {
  try {
    const value = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

function groupOf(pid: number): number | undefined {
  const pgrp = procStatFields(pid)?.[2];
  return pgrp === undefined ? undefined : Number(pgrp);
}

function carries(pid: number, marker: readonly string[]): boolean {
  let variables: string[];
  try {
    variables = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return false; // gone, or not ours to read
  }
  return marker.every((entry) => variables.includes(entry));
}
