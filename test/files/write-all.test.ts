import { mkdtempSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { IncompleteWrite, isFolderWriteFailure, writeWholeFile, type WriteFn } from '../../src/files/write-all.js';
import { WaveError } from '../../src/errors.js';

const kSrc = new URL('../../src/', import.meta.url);

/** A write(2) that takes at most `most` bytes a call and then, after `calls` calls, none. */
function trickle(most: number, calls = Infinity): WriteFn {
  let left = calls;
  return (fd, bytes, offset, length) => (left-- > 0 ? writeSync(fd, bytes, offset, Math.min(length, most)) : 0);
}

describe('writeWholeFile', () => {
  test('writes and appends every byte however few each call takes', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'csv-wave-write-all-')), 'wisdom.md');
    writeWholeFile(path, 'first line é\n', 'w', trickle(3));
    writeWholeFile(path, 'second line\n', 'a', trickle(1));
    expect(readFileSync(path, 'utf8')).toBe('first line é\nsecond line\n');
  });

  test('a call that writes nothing is an IncompleteWrite saying how far it got, never an endless loop', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'csv-wave-write-all-')), 'discoveries.ndjson');
    writeFileSync(path, '{"a":1}\n');
    let error: unknown;
    try {
      writeWholeFile(path, 'x'.repeat(100), 'a', trickle(10, 4));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(IncompleteWrite);
    expect((error as IncompleteWrite).written).toBe(40);
    expect((error as Error).message).toBe('wrote 40 of 100 bytes: no progress (is the disk full?)');
    // The failed append is taken back whole: no half line for the next append to run into.
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
    writeWholeFile(path, '{"b":2}\n', 'a');
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":2}\n');
  });
});

// Every file csv-wave writes goes through write-all.ts, which checks each write's count.
// lock.ts is left to the lock's own rework (issue 9, defect 2); its writeFileSync loops
// on short writes itself (Node's fs does), and its file is a few bytes.
test('no source file writes a file but through write-all.ts', () => {
  const offenders: string[] = [];
  const walk = (dir: URL) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(new URL(`${entry.name}/`, dir));
      else if (entry.name.endsWith('.ts')) {
        const relative = new URL(entry.name, dir).pathname.slice(kSrc.pathname.length);
        if (relative === 'files/write-all.ts' || relative === 'session/lock.ts') continue;
        const text = readFileSync(new URL(entry.name, dir), 'utf8');
        if (/\b(writeSync|writeFileSync|appendFileSync|createWriteStream|appendFile|writeFile)\b/.test(text)) offenders.push(relative);
      }
    }
  };
  walk(kSrc);
  expect(offenders).toEqual([]);
});

// What stops a run (error class io) rather than failing the task whose files these were.
describe('isFolderWriteFailure', () => {
  const system = (code: string) => Object.assign(new Error(`${code}: what the system said`), { code });

  test('a short write, and the folder errors, also as the cause of a WaveError IO, are the folder\'s', () => {
    expect(isFolderWriteFailure(new IncompleteWrite(3, 10, 'no progress (is the disk full?)'))).toBe(true);
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EIO']) {
      expect(isFolderWriteFailure(system(code)), code).toBe(true);
      expect(isFolderWriteFailure(new WaveError('IO', `Cannot write x: ${code}`, { cause: system(code) })), code).toBe(true);
    }
  });

  test('a refusal to write through a symlink out of the session, or any other error, is not', () => {
    expect(isFolderWriteFailure(new WaveError('IO', 'Refused to write artifacts/a/notes.md: artifacts is a symlink to /x'))).toBe(false);
    expect(isFolderWriteFailure(system('ENAMETOOLONG'))).toBe(false);
    expect(isFolderWriteFailure(new Error('plain'))).toBe(false);
    expect(isFolderWriteFailure('ENOSPC')).toBe(false);
  });
});
