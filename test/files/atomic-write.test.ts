import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { writeFileAtomic } from '../../src/files/atomic-write.js';
import { expectWaveError } from '../helpers/wave-error.js';

// A failing disk, simulated: this works as root too, where a read-only folder does not fail.
// `disk` makes writeSync behave like a disk that fills up: 'short' writes half of what it
// is asked and says so by its count (then the disk is full: ENOSPC), 'stuck' writes
// nothing and returns 0, 'lying' writes half and claims it wrote everything.
const failure = vi.hoisted(() => ({
  writeSync: false,
  renameSync: false,
  disk: 'ok' as 'ok' | 'short' | 'stuck' | 'lying',
  full: false,
}));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const failing =
    <A extends unknown[], R>(name: 'writeSync' | 'renameSync', original: (...args: A) => R) =>
    (...args: A): R => {
      if (failure[name]) throw Object.assign(new Error(`ENOSPC: no space left on device, ${name}`), { code: 'ENOSPC' });
      return original(...args);
    };
  // Both forms: the whole string (what the old writer did) and bytes from an offset.
  const writeSync = (fd: number, data: string | Uint8Array, offset?: number, length?: number): number => {
    if (failure.disk === 'ok') return fs.writeSync(fd, data as Uint8Array, offset, length);
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const start = typeof data === 'string' ? 0 : (offset ?? 0);
    const asked = typeof data === 'string' ? bytes.length : (length ?? bytes.length - start);
    if (failure.disk === 'stuck') return 0;
    if (failure.full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    failure.full = failure.disk === 'short';
    const written = fs.writeSync(fd, bytes, start, Math.floor(asked / 2));
    return failure.disk === 'lying' ? asked : written;
  };
  return {
    ...fs,
    default: fs,
    writeSync: failing('writeSync', writeSync),
    renameSync: failing('renameSync', fs.renameSync),
  };
});

afterEach(() => {
  failure.writeSync = false;
  failure.renameSync = false;
  failure.disk = 'ok';
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
    // The system's error, or the one an incomplete write carries.
    const cause = error.cause as Error & { code?: string };
    expect(cause.code ?? (cause.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(readFileSync(path, 'utf8')).toBe('old\n');
    expect(readdirSync(dir)).toEqual(['tasks.csv']);
  });

  // A disk that fills up part way: write(2) writes less than asked and only its count says so.
  test.each([
    { disk: 'short', message: /^Cannot write .*: wrote 10000 of 20000 bytes: ENOSPC/ },
    { disk: 'stuck', message: /^Cannot write .*: wrote 0 of 20000 bytes: no progress/ },
    { disk: 'lying', message: /^Cannot write .*: the file written holds 10000 bytes instead of 20000/ },
  ] as const)('a $disk write leaves the old file whole and no temporary file', ({ disk, message }) => {
    const { dir, path } = folderWithOldFile();
    failure.disk = disk;
    failure.full = false;
    expectWaveError(() => writeFileAtomic(path, 'new content\n'.repeat(2000).slice(0, 20_000)), { code: 'IO', message });
    expect(readFileSync(path, 'utf8')).toBe('old\n');
    expect(readdirSync(dir)).toEqual(['tasks.csv']);
  });

  // The folder turned read-only between the temporary file's creation and its rename: the
  // clean-up fails too (EACCES on unlink), and it must not hide why the write failed.
  test('a clean-up that fails after a failed write still throws the write error, naming the file', () => {
    const { path } = folderWithOldFile();
    const temporary = `${path}.${process.pid}.tmp`;
    const failing = () => {
      // Left where the temporary file was: something rmSync without `recursive` cannot remove.
      rmSync(temporary);
      mkdirSync(join(temporary, 'inside'), { recursive: true });
      throw Object.assign(new Error('EACCES: permission denied, write'), { code: 'EACCES' });
    };
    expectWaveError(() => writeFileAtomic(path, 'new\n', () => true, failing), {
      code: 'IO',
      message: /^Cannot write .*tasks\.csv: .*EACCES: permission denied, write$/,
    });
    expect(readFileSync(path, 'utf8')).toBe('old\n');
  });

  test('a write in pieces writes every byte of every piece, however few each call takes', () => {
    const { path } = folderWithOldFile();
    let calls = 0;
    const trickle = (fd: number, bytes: Uint8Array, offset: number, length: number) => {
      calls++;
      return writeSync(fd, bytes, offset, Math.min(length, 7));
    };
    const pieces = ['first piece\n', 'é'.repeat(100), '\nlast\n'];
    expect(writeFileAtomic(path, pieces, () => true, trickle)).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe(pieces.join(''));
    expect(calls).toBeGreaterThan(pieces.length);
  });
});
