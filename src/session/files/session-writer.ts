import { rmSync } from 'node:fs';
import { writeFileAtomic } from '../../files/atomic-write.js';
import { writeWholeFile } from '../../files/write-all.js';
import { sessionPathForWrite } from '../../files/session-path.js';
import type { SessionFileWriter } from '../../layout.js';

/**
 * The one writer of a session folder's files for the run and the code it hands it to (the
 * interactive lane and its handlers, the session id, the wave files): every path is
 * checked by sessionPathForWrite (inside the folder, no symlink out of it, its folders
 * made one at a time), and every write goes through writeWholeFile (every byte or an
 * error; a failed append taken back whole) or writeFileAtomic. A failed write throws what
 * those throw, unchanged: the caller decides what it means (a failed interactive task, a
 * run that cannot start), as isFolderWriteFailure tells a full disk from a refused path.
 */
export class SessionWriter implements SessionFileWriter {
  /** The session folder. */
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  write(path: string, data: string): void {
    writeWholeFile(sessionPathForWrite(this.dir, path), data);
  }

  append(path: string, data: string): void {
    writeWholeFile(sessionPathForWrite(this.dir, path), data, 'a');
  }

  remove(path: string): void {
    rmSync(sessionPathForWrite(this.dir, path), { force: true });
  }

  /** Replaces the file at `path` by a rename (writeFileAtomic), for a file a reader must never see half of; returns its absolute path. */
  replace(path: string, data: string): string {
    const target = sessionPathForWrite(this.dir, path);
    writeFileAtomic(target, data);
    return target;
  }
}
