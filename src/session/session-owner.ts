import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeWholeFile } from '../files/write-all.js';
import { WaveError } from '../errors.js';
import { sessionPathForWrite } from '../files/session-path.js';
import type { Session } from './session.js';
import { kLayout } from '../layout.js';

/**
 * The name of the tasks file that owns the folder's session state, if one was recorded.
 * A folder holds one session: its journal, lock, wave files, artifacts and discoveries
 * are named after task ids and waves, not after the tasks file, so two tasks files in one
 * folder would mix their results (the journal of `a.csv` applied to `b.csv`).
 */
function recordedOwner(session: Session): string | undefined {
  const path = join(session.dir, kLayout.owner);
  if (!existsSync(path)) return undefined;
  const name = readFileSync(path, 'utf8').trim();
  return name === '' ? undefined : name;
}

/** Throws WaveError USAGE when the folder's session state belongs to another tasks file. */
export function checkSessionOwner(session: Session): void {
  const owner = recordedOwner(session);
  const mine = basename(session.tasksPath);
  if (owner === undefined || owner === mine) return;
  throw new WaveError(
    'USAGE',
    `${session.displayPath}: the session in ${session.dir} belongs to ${owner} (its journal, lock, wave files, ` +
      `artifacts and discoveries), and a folder holds one session. Move ${mine} into a folder of its own ` +
      `and run it there; nothing was run.`,
    { path: session.displayPath },
  );
}

/**
 * Records that the folder's state belongs to this tasks file, after checking that it does
 * not belong to another. Called under the session lock, right before the first write into the session.
 * Sessions from before the record existed are claimed by the first tasks file run in them.
 */
export function claimSession(session: Session): void {
  checkSessionOwner(session);
  if (recordedOwner(session) !== undefined) return;
  const path = sessionPathForWrite(session.dir, kLayout.owner);
  try {
    writeWholeFile(path, `${basename(session.tasksPath)}\n`);
  } catch (error) {
    // A full disk or a read-only folder: the user's to fix, before anything ran.
    throw new WaveError('WRITE_FAILED', `Cannot write ${path}: ${(error as Error).message}. Nothing was run.`, {
      path,
      cause: error,
    });
  }
}
