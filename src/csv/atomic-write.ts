import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { WaveError } from '../errors.js';

/**
 * Writes a file by writing a temporary sibling, flushing it to disk and renaming it over
 * the target. rename() is atomic on POSIX file systems, so a reader (or a crash) sees
 * either the old content or the new one. Throws WaveError IO, the old file untouched.
 * The content may come in pieces, written as they come. Returns whether it replaced the file.
 */
export function writeFileAtomic(
  path: string,
  content: string | Iterable<string>,
  /** Asked after the new content is on disk, right before the rename; false leaves the old file. */
  mayReplace: () => boolean = () => true,
): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    // A fresh file, never one planted at the temporary name (a symlink would be written through).
    rmSync(temporary, { force: true });
    const fd = openSync(temporary, 'wx');
    try {
      if (typeof content === 'string') writeSync(fd, content);
      else for (const piece of content) writeSync(fd, piece);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (!mayReplace()) {
      rmSync(temporary, { force: true });
      return false;
    }
    renameSync(temporary, path);
    return true;
  } catch (error) {
    rmSync(temporary, { force: true });
    // A read-only folder or a full disk is the user's to fix, not a bug: a WaveError.
    throw new WaveError('IO', `Cannot write ${path}: ${(error as Error).message}`, { path, cause: error });
  }
}
