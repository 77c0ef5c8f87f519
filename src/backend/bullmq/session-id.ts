import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeWholeFile } from '../../csv/write-all.js';
import { WaveError } from '../../errors.js';
import { sessionPathForWrite } from '../../knowledge/session-path.js';
import { kSessionIdPattern } from './names.js';

/** Where a session keeps its id: engine state, next to the journal. */
const kSessionIdFile = join('.csv-wave', 'session-id');

/**
 * The session's id, which names its queue and its jobs: read from `.csv-wave/session-id`,
 * or made and written there on the session's first bullmq run. It stays the same across
 * runs, so that `resume` finds the jobs a killed coordinator added. Called under the lock.
 */
export function sessionIdOf(sessionDir: string): string {
  const path = join(sessionDir, kSessionIdFile);
  if (existsSync(path)) {
    const id = readFileSync(path, 'utf8').trim();
    if (!kSessionIdPattern.test(id)) {
      throw new WaveError('INVALID_SESSION', `${path} holds no session id (letters, digits, . _ -): remove it and a new one is made`, {
        path,
      });
    }
    return id;
  }
  const id = randomUUID();
  writeWholeFile(sessionPathForWrite(sessionDir, kSessionIdFile), `${id}\n`);
  return id;
}
