import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';

/** A command that writes its shell's pid to `<marks>/<id>.pid`, then runs until killed. */
export const waiter = (marks: string, id: string) => `echo $$ > '${join(marks, `${id}.pid`)}'; exec sleep 600`;

/** The pid a waiter wrote, once it has written it. */
export async function startedPid(marks: string, id: string): Promise<number> {
  const file = join(marks, `${id}.pid`);
  await vi.waitFor(() => expect(readFileSync(file, 'utf8')).toMatch(/^\d+\n$/), { timeout: 60_000, interval: 20 });
  return Number(readFileSync(file, 'utf8'));
}

export const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export async function expectEnded(pid: number): Promise<void> {
  await vi.waitFor(() => expect(isRunning(pid)).toBe(false), { timeout: 60_000, interval: 20 });
}
