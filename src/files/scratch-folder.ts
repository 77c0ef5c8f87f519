import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeWholeFile } from './write-all.js';

/**
 * A private folder under the system's temporary folder, never the session's, for the files
 * one attempt hands a program and reads back (the codex executor's answer schema and last
 * message). `files` are written there first; the folder goes when `use` settles. Its name
 * holds this process's id: a run stopped mid-attempt ends its worker threads before they
 * clean up, and removeStaleScratchFolders takes what such a process left.
 */
export async function withScratchFolder<T>(prefix: string, files: Readonly<Record<string, string>>, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
  try {
    for (const [name, content] of Object.entries(files)) writeWholeFile(join(dir, name), content);
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Removes the scratch folders of `prefix` whose process is gone; returns how many. */
export function removeStaleScratchFolders(prefix: string, root: string = tmpdir()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    rmSync(join(root, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
