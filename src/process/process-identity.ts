import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { procStatFields } from './proc-stat.js';

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

/** A process as a lock or a lease names it: its pid on its host, and its identity there. */
export interface ProcessOwner extends ProcessIdentity {
  pid: number;
  hostname: string;
}

/**
 * Whether the process an owner record names may still run, as far as this machine can
 * tell: `gone` only when that is sure (this host, and its boot, pid namespace and start
 * time say so); never for a process on another machine or in another pid namespace, whose
 * pid cannot be checked from here.
 *
 * @param isSelf for an owner of this very pid: whether it is this process's own record
 *   (only the caller knows which records it made). @default false: a namesake, gone
 */
export function ownerStateOf(owner: ProcessOwner, isSelf: () => boolean = () => false): OwnerState {
  if (owner.hostname !== hostname()) return 'other-host';
  const own = ownIdentity();
  // Every process of an earlier boot is gone.
  if (owner.bootId !== undefined && own.bootId !== undefined && owner.bootId !== own.bootId) return 'gone';
  if (owner.pidNamespace !== undefined && own.pidNamespace !== undefined && owner.pidNamespace !== own.pidNamespace) {
    return 'other-namespace';
  }
  if (owner.pid === process.pid) return isSelf() ? 'running' : 'gone';
  if (!isAlive(owner.pid)) return 'gone';
  // Alive, but started at another time: a later process that got the owner's pid.
  const startTicks = owner.startTicks === undefined ? undefined : startTicksOf(owner.pid);
  if (startTicks !== undefined && startTicks !== owner.startTicks) return 'gone';
  return 'running';
}

/** What ownerStateOf can tell of a process. */
export type OwnerState =
  /** It runs (or may: its pid is alive with its start time). */
  | 'running'
  /** Surely ended: its pid is dead here, taken by a later process, or of an earlier boot. */
  | 'gone'
  /** On another machine: not checked. */
  | 'other-host'
  /** In another pid namespace of this machine (a container): not checked. */
  | 'other-namespace';

/** True when a process of this pid runs on this machine (whoever owns it). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
