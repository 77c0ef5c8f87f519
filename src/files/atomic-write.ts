import { createHash, type Hash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { WaveError } from '../errors.js';
import { writeAll, type WriteFn } from './write-all.js';

/**
 * Writes a file by writing a temporary sibling, flushing it to disk and renaming it over
 * the target. rename() is atomic on POSIX file systems, so a reader (or a crash) sees
 * either the old content or the new one. Throws WaveError IO, the old file untouched.
 * The content may come in pieces, written as they come. Returns whether it replaced the file.
 *
 * Before the rename the temporary file is read back and checked (its size and a SHA-256 of
 * its bytes against what was meant to be written): a disk that filled up, or a file system
 * that lost bytes, fails the write here and the old file stays, instead of a short file
 * replacing it.
 */
export function writeFileAtomic(
  path: string,
  content: string | Iterable<string>,
  /**
   * Asked after the new content is on disk, right before the rename, with the temporary
   * file's path (to know the file it writes by its identity: the rename keeps it) and the
   * SHA-256 (hex) of its bytes, already computed for the check: a caller that keeps it
   * hashes nothing again. False leaves the old file.
   */
  mayReplace: (temporary: string, sha256: string) => boolean = () => true,
  /** The write system call (tests inject one that writes less). */
  write?: WriteFn,
): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    // A fresh file, never one planted at the temporary name (a symlink would be written through).
    rmSync(temporary, { force: true });
    const fd = openSync(temporary, 'wx');
    const meant = createHash('sha256');
    let size = 0;
    try {
      for (const piece of typeof content === 'string' ? [content] : content) {
        const bytes = Buffer.from(piece, 'utf8');
        size += writeAll(fd, bytes, write);
        meant.update(bytes);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const digest = verifyWritten(temporary, size, meant);
    if (!mayReplace(temporary, digest)) {
      rmSync(temporary, { force: true });
      return false;
    }
    renameSync(temporary, path);
    return true;
  } catch (error) {
    removeQuietly(temporary);
    // A read-only folder or a full disk is the user's to fix, not a bug: a WaveError.
    throw new WaveError('IO', `Cannot write ${path}: ${(error as Error).message}`, { path, cause: error });
  }
}

/**
 * Removes a temporary file after a failed write, if it can. A folder that turned read-only
 * (or a disk that went away) refuses this too, and that second error must not hide the
 * first, which names the file and what went wrong; the next run removes what is left
 * (session/stale-temporaries.ts).
 */
function removeQuietly(temporary: string): void {
  try {
    rmSync(temporary, { force: true });
  } catch {
    // Left for the next run.
  }
}

/** Bytes read back at a time when checking a written file. */
const kReadBackChunk = 1 << 20;

/** Throws unless the file holds exactly `size` bytes whose SHA-256 is `meant`'s; returns that SHA-256 (hex). */
function verifyWritten(path: string, size: number, meant: Hash): string {
  const found = createHash('sha256');
  const buffer = Buffer.allocUnsafe(kReadBackChunk);
  let total = 0;
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      found.update(buffer.subarray(0, read));
      total += read;
    }
  } finally {
    closeSync(fd);
  }
  if (total !== size) throw new Error(`the file written holds ${total} bytes instead of ${size} (is the disk full?)`);
  const digest = meant.digest('hex');
  if (found.digest('hex') !== digest) throw new Error('the file written differs from what was written to it');
  return digest;
}
