import { readFileSync } from 'node:fs';

/**
 * The fields of `/proc/<pid>/stat` after the command name, from `state` (field 3 in
 * proc(5)'s numbering) on: index 0 is state, 1 ppid, 2 pgrp, 19 starttime. The name is in
 * parentheses and may itself hold spaces and parentheses, so the split is after the last ')'.
 * Undefined when the process is gone (or there is no /proc).
 */
export function procStatFields(pid: number | string): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
