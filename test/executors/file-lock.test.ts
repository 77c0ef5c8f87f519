import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/files/file-lock.js';

/** The lock that serializes git's worktree commands (executors/workdir/worktree.ts) across processes. */

const kHolder = fileURLToPath(new URL('../fixtures/file-lock-holder.mjs', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-file-lock-'));
  dirs.push(dir);
  return dir;
}

function holder(lock: string, log: string, times: number): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', kHolder, lock, log, String(times), '4'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
}

describe('withFileLock', () => {
  it('lets one holder in at a time across processes and within one', async () => {
    const dir = tempDir();
    const lock = join(dir, 'x.lock');
    const log = join(dir, 'log');
    writeFileSync(log, '');
    const codes = await Promise.all([holder(lock, log, 8), holder(lock, log, 8), holder(lock, log, 8), holder(lock, log, 8)]);
    expect(codes).toEqual([0, 0, 0, 0]);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(64);
    for (let i = 0; i < lines.length; i += 2) {
      const pid = lines[i]!.split(' ')[1];
      expect([lines[i], lines[i + 1]], `lines ${i + 1}-${i + 2}`).toEqual([`start ${pid}`, `end ${pid}`]);
    }
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock whose process is gone', async () => {
    const dir = tempDir();
    const lock = join(dir, 'x.lock');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lock, `${gone}\n${hostname()}\n`);
    expect(await withFileLock(lock, () => Promise.resolve('held'))).toBe('held');
    expect(existsSync(lock)).toBe(false);
  });

  it('frees the lock when the holder throws', async () => {
    const dir = tempDir();
    const lock = join(dir, 'x.lock');
    await expect(withFileLock(lock, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
    expect(await withFileLock(lock, () => Promise.resolve(1))).toBe(1);
  });
});
