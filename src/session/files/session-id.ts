import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { kSessionIdPattern } from '../../backend/bullmq/jobs/names.js';
import { WaveError } from '../../errors.js';
import { kLayout, type SessionFileWriter } from '../../layout.js';
import { SessionWriter } from './session-writer.js';

/** Where a session keeps its id: engine state, next to the journal. */
const kSessionIdFile = kLayout.sessionId;

/**
 * The session folder an id was made for: its device and inode (as decimal text: an inode
 * may pass 2^53), and its real path, for messages and for a device that changed.
 */
interface FolderIdentity {
  dev: string;
  ino: string;
  path: string;
}

/**
 * The session's id, which names its queue and its jobs: read from `.csv-wave/session-id`,
 * or made and written there on the session's first bullmq run. It stays the same across
 * runs, so that `resume` finds the jobs a killed coordinator added. Called under the lock,
 * by the run when its backend asks for the id (BackendContext's `sessionId`): the session
 * layer keeps the file, the backend never writes the folder. Written through `files`.
 *
 * An id belongs to one folder: the file's second line records the folder it was made in.
 * Read in another folder (a copy: `cp -r`, a restore from a backup, a move to another file
 * system), the id is not this folder's: two folders sharing one would add jobs of the same
 * names to one queue and take each other's replies. So a new id is made and written, and
 * `warn` says why, naming the old id and the new one. A file of an older csv-wave, holding
 * the id alone, is adopted as this folder's. A move within a file system keeps the inode,
 * so the session keeps its id (the path is brought up to date).
 */
export function sessionIdOf(
  sessionDir: string,
  warn: (message: string) => void,
  files: SessionFileWriter = new SessionWriter(sessionDir),
): string {
  const path = join(sessionDir, kSessionIdFile);
  const here = identityOf(sessionDir);
  if (!existsSync(path)) return write(files, randomUUID(), here);
  const { id, folder } = parseFile(path, readFileSync(path, 'utf8'));
  if (folder === undefined) return write(files, id, here);
  if (sameFolder(folder, here)) {
    if (folder.dev !== here.dev || folder.path !== here.path) write(files, id, here);
    return id;
  }
  const fresh = write(files, randomUUID(), here);
  warn(
    `bullmq: ${kSessionIdFile} was made in the folder ${folder.path} (device ${folder.dev}, inode ${folder.ino}), not in this one ` +
      `(${here.path}, device ${here.dev}, inode ${here.ino}): this folder is a copy, and two folders must not share a session id ` +
      `(their jobs would mix). It gets a session id of its own: ${fresh} (it was ${id}). Jobs of the old id are not awaited here.`,
  );
  return fresh;
}

/**
 * The id in `.csv-wave/session-id`, only read (status): undefined when the session never
 * ran on bullmq or the file holds no id. No check of the folder: nothing is written.
 */
export function readSessionId(sessionDir: string): string | undefined {
  const path = join(sessionDir, kSessionIdFile);
  if (!existsSync(path)) return undefined;
  const id = readFileSync(path, 'utf8').split('\n', 1)[0]?.trim() ?? '';
  return kSessionIdPattern.test(id) ? id : undefined;
}

/**
 * The same folder: the same inode, and the same device or the same real path. The inode
 * alone may be another file system's; the device alone changes for one folder (the device
 * numbers of a network mount differ between the machines that mount it, a disk's may change
 * at a reboot), while a copy is always a new inode on its own file system.
 */
function sameFolder(made: FolderIdentity, here: FolderIdentity): boolean {
  return made.ino === here.ino && (made.dev === here.dev || made.path === here.path);
}

function identityOf(sessionDir: string): FolderIdentity {
  const stat = statSync(sessionDir, { bigint: true });
  return { dev: String(stat.dev), ino: String(stat.ino), path: realpathSync(sessionDir) };
}

/** Line 1: the id (so that `head -n 1` gives it); line 2: the folder, as JSON. */
function write(files: SessionFileWriter, id: string, folder: FolderIdentity): string {
  files.write(kSessionIdFile, `${id}\n${JSON.stringify(folder)}\n`);
  return id;
}

function parseFile(path: string, text: string): { id: string; folder: FolderIdentity | undefined } {
  const [first = '', second = ''] = text.split('\n');
  const id = first.trim();
  if (!kSessionIdPattern.test(id)) {
    throw new WaveError('INVALID_SESSION', `${path} holds no session id (letters, digits, . _ -): remove it and a new one is made`, {
      path,
    });
  }
  return { id, folder: parseFolder(second) };
}

/** The recorded folder; undefined for none (an older file) or one that cannot be read, which is then adopted as this folder's. */
function parseFolder(line: string): FolderIdentity | undefined {
  try {
    const value = JSON.parse(line) as Partial<FolderIdentity> | null;
    const { dev, ino, path } = value ?? {};
    return typeof dev === 'string' && typeof ino === 'string' && typeof path === 'string' ? { dev, ino, path } : undefined;
  } catch {
    return undefined;
  }
}
