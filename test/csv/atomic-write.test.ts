import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { writeFileAtomic } from '../../src/csv/atomic-write.js';
import { expectWaveError } from '../helpers/wave-error.js';

// A failing disk, simulated: this works as root too, where a read-only folder does not fail.
const failure = vi.hoisted(() => ({ writeSync: false, renameSync: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const failing =
    <A extends unknown[], R>(name: keyof typeof failure, original: (...args: A) => R) =>
    (...args: A): R => {
      if (failure[name]) throw Object.assign(new Error(`ENOSPC: no space left on device, ${name}`), { code: 'ENOSPC' });
      return original(...args);
    };
  return {
    ...fs,
    default: fs,
    writeSync: failing('writeSync', fs.writeSync as (...args: unknown[]) => number),
    renameSync: failing('renameSync', fs.renameSync),
  };
});

afterEach(() => {
  failure.writeSync = false;
  failure.renameSync = false;
});

function folderWithOldFile(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-atomic-'));
  const path = join(dir, 'tasks.csv');
  writeFileSync(path, 'old\n');
  return { dir, path };
}

describe('writeFileAtomic', () => {
  test('replaces the file and leaves no temporary sibling', () => {
    const { dir, path } = folderWithOldFile();
    const content = 'new, much longer content\n'.repeat(10_000);
    writeFileAtomic(path, content);
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(readdirSync(dir)).toEqual(['tasks.csv']);
  });

  test.each(['writeSync', 'renameSync'] as const)('a failing %s leaves the old file and no temporary file', (step) => {
    const { dir, path } = folderWithOldFile();
    failure[step] = true;
    const error = expectWaveError(() => writeFileAtomic(path, 'new\n'), {
      code: 'IO',
      message: /^Cannot write .*ENOSPC/,
    });
    expect(error.path).toBe(path);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(readFileSync(path, 'utf8')).toBe('old\n');
    expect(readdirSync(dir)).toEqual(['tasks.csv']);
  });
});
