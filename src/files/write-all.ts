import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/** The one system call every write of csv-wave goes through; tests pass one that writes less. */
export type WriteFn = (fd: number, bytes: Uint8Array, offset: number, length: number) => number;

const kWriteSync: WriteFn = (fd, bytes, offset, length) => writeSync(fd, bytes, offset, length);

/** A write that stopped before its last byte: how far it got, and why (the system's error in `cause`). */
export class IncompleteWrite extends Error {
  constructor(
    readonly written: number,
    readonly total: number,
    reason: string,
    cause?: unknown,
  ) {
    super(`wrote ${written} of ${total} bytes: ${reason}`, cause === undefined ? undefined : { cause });
  }
}

/**
 * Writes every byte or throws IncompleteWrite. write(2) may write fewer bytes than asked
 * (a disk that fills up part way says so only by the count it returns), so it is called
 * again from where it stopped; a call that writes nothing is an error, never a loop.
 */
export function writeAll(fd: number, data: string | Uint8Array, write: WriteFn = kWriteSync): number {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let offset = 0;
  while (offset < bytes.length) {
    let written: number;
    try {
      written = write(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      throw new IncompleteWrite(offset, bytes.length, (error as Error).message, error);
    }
    if (!(written > 0)) throw new IncompleteWrite(offset, bytes.length, 'no progress (is the disk full?)');
    offset += written;
  }
  return bytes.length;
}

/**
 * Writes a whole file (`'w'`: replaced; `'a'`: appended to) through writeAll, so that no
 * short write goes unnoticed. An append that fails is taken back whole (the file is cut
 * back to its size before it), so that a line cut short by a full disk never runs into the
 * next append and spoils both. Not atomic: a file a reader must never see half of goes
 * through writeFileAtomic. Throws the system's error, or IncompleteWrite.
 */
export function writeWholeFile(path: string, data: string | Uint8Array, flag: 'w' | 'a' = 'w', write?: WriteFn): void {
  const fd = openSync(path, flag);
  try {
    const sizeBefore = flag === 'a' ? fstatSync(fd).size : 0;
    try {
      writeAll(fd, data, write);
    } catch (error) {
      // Shrinking a file needs no free space: this works on a full disk too.
      if (flag === 'a') ftruncateSync(fd, sizeBefore);
      throw error;
    }
  } finally {
    closeSync(fd);
  }
}

/** System errors that say the folder cannot take a file, whatever the file: out of space, read-only, not ours, in the way. */
const kFolderErrorCodes: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'EIO']);

/**
 * Whether a write failed because of where it went rather than what was written: a short
 * write, or one of kFolderErrorCodes on the error or any error it was caused by (a
 * WaveError IO keeps the system's error in `cause`). A refusal to write through a symlink
 * carries no such code: it is not the folder's state and stays the caller's failure.
 */
export function isFolderWriteFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof IncompleteWrite) return true;
    const code = (current as NodeJS.ErrnoException).code;
    if (code !== undefined && kFolderErrorCodes.has(code)) return true;
  }
  return false;
}
