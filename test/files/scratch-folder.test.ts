import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeStaleScratchFolders, withScratchFolder } from '../../src/files/scratch-folder.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('scratch folders', () => {
  it('hold the given files while in use, and are gone after, also when use throws', async () => {
    let seen = '';
    await withScratchFolder('csv-wave-scratch-test-', { 'a.json': '{}' }, async (dir) => {
      seen = dir;
      expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{}');
      expect(dir).toContain(`csv-wave-scratch-test-${process.pid}-`);
    });
    expect(existsSync(seen)).toBe(false);
    await expect(
      withScratchFolder('csv-wave-scratch-test-', {}, async (dir) => {
        seen = dir;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(seen)).toBe(false);
  });

  it('left by a process that is gone are removed; those of live processes and other names stay', () => {
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-scratch-root-'));
    roots.push(root);
    // Above Linux's largest pid_max (2^22) and macOS's: no process has this id.
    const gone = 2 ** 22 + 1;
    for (const name of [`p-${gone}-abc`, `p-${process.pid}-def`, 'p-x-ghi', 'other-1-jkl']) mkdirSync(join(root, name));
    expect(removeStaleScratchFolders('p-', root)).toBe(1);
    expect(existsSync(join(root, `p-${gone}-abc`))).toBe(false);
    for (const name of [`p-${process.pid}-def`, 'p-x-ghi', 'other-1-jkl']) expect(existsSync(join(root, name))).toBe(true);
  });
});
