import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { WaveError } from '../errors.js';
import { sessionConfigSchema, type SessionConfig } from '../schema/session.js';

/** Where a session's files are, and its settings. */
export interface Session {
  /** Absolute path of the session folder. */
  dir: string;
  /** Absolute path of the master tasks.csv. */
  tasksPath: string;
  /** The tasks file as error messages show it: relative to the working folder when inside it. */
  displayPath: string;
  config: SessionConfig;
}

/**
 * Opens a session from the folder or the path of its tasks.csv (any `.csv` file names its
 * own session: the folder it sits in). Reads session.json when present.
 */
export function openSession(pathArgument: string): Session {
  const absolute = resolve(pathArgument);
  let tasksPath: string;
  if (existsSync(absolute) && statSync(absolute).isDirectory()) tasksPath = join(absolute, 'tasks.csv');
  else tasksPath = absolute;
  if (!existsSync(tasksPath)) {
    throw new WaveError(
      'IO',
      `No tasks file at ${tasksPath}: name a session folder holding tasks.csv, or the path of a tasks.csv`,
      { path: tasksPath },
    );
  }
  const dir = dirname(tasksPath);
  return { dir, tasksPath, displayPath: displayPathOf(tasksPath), config: readSessionConfig(dir) };
}

function displayPathOf(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere === '' || fromHere.startsWith('..') ? path : fromHere;
}

/** session.json parsed and checked; a session without one gets the defaults (brainstorm). */
export function readSessionConfig(dir: string): SessionConfig {
  const path = join(dir, 'session.json');
  if (!existsSync(path)) return sessionConfigSchema.parse({});
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new WaveError('INVALID_SESSION', `${basename(path)}: not valid JSON: ${(error as Error).message}`, {
      path,
      cause: error,
    });
  }
  const parsed = sessionConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const details = parsed.error.issues.map((issue) => {
      const where = issue.path.length > 0 ? issue.path.join('.') : '(top level)';
      return `${basename(path)}: ${where}: ${issue.message}`;
    });
    throw new WaveError('INVALID_SESSION', details.join('\n'), { path });
  }
  return parsed.data;
}
