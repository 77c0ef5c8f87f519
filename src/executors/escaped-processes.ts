import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { procStatFields } from './proc-stat.js';

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
      (pid) => pid !== process.pid && !killed.has(pid) && carries(pid, marker) && groupOf(pid) !== shellPid,
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

/** The pids of this pid namespace handed out after `pid` (pids wrap around at pid_max). */
function newerPids(pid: number): number[] {
  const last = lastPid();
  // No pid handed out since the shell's: it started nothing (a command that execs, like
  // `true`), and /proc need not be listed (the costliest step of a short command's end).
  if (last === pid) return [];
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
