import { readFileSync, readlinkSync } from 'node:fs';
import { procStatFields } from '../executors/proc-stat.js';

/**
 * What tells one process apart from another that later gets the same pid: the boot of the
 * machine, the pid namespace the pid is counted in (each container has its own, where a
 * run is often pid 1 every time), and the process's start time. Linux only (/proc);
 * elsewhere every field is absent and a pid is all there is.
 */
export interface ProcessIdentity {
  /** /proc/sys/kernel/random/boot_id: changes at every boot. */
  bootId?: string;
  /** /proc/self/ns/pid, such as `pid:[4026531836]`. */
  pidNamespace?: string;
  /** Start time in clock ticks after boot (field 22 of /proc/<pid>/stat). */
  startTicks?: number;
}

/** This process's identity. */
export function ownIdentity(): ProcessIdentity {
  const identity: ProcessIdentity = {};
  const bootId = readOrUndefined(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  if (bootId) identity.bootId = bootId;
  const pidNamespace = readOrUndefined(() => readlinkSync('/proc/self/ns/pid'));
  if (pidNamespace) identity.pidNamespace = pidNamespace;
  const startTicks = startTicksOf('self');
  if (startTicks !== undefined) identity.startTicks = startTicks;
  return identity;
}

/** When the process of this pid (in this pid namespace) started, in clock ticks after boot; undefined where unknown or gone. */
export function startTicksOf(pid: number | 'self'): number | undefined {
  // starttime is field 22; the fields procStatFields returns start at 3 (state).
  const value = Number(procStatFields(pid)?.[22 - 3]);
  return Number.isSafeInteger(value) ? value : undefined;
}

function readOrUndefined<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
