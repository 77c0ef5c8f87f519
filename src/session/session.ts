import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { textProblem } from '../csv/utf8-text.js';
import { WaveError, formatViolations } from '../errors.js';
import { inferPipeline } from '../pipelines/roles.js';
import type { SettingsFile } from '../pipelines/index.js';
import { sessionConfigSchema, type PipelineName, type SessionConfig } from '../schema/session.js';
import { jsonSyntaxMessage, sessionViolations } from './session-diagnostics.js';
import { kLayout } from '../layout.js';

/** Where a session's files are, and its settings. */
export interface Session {
  /** Absolute path of the session folder. */
  dir: string;
  /** Absolute path of the master tasks.csv. */
  tasksPath: string;
  /** The tasks file as error messages show it: relative to the working folder when inside it. */
  displayPath: string;
  /**
   * session.json, `--pipeline` over its `pipeline`. A pipeline named by neither is absent
   * until settlePipeline picks it from the roles, once tasks.csv is read.
   */
  config: SessionConfig;
  /** session.json as read, so that its pipeline's settings are refused at the line of their key; absent without one. */
  configFile?: SettingsFile;
}

/** A session whose pipeline is settled (settlePipeline): every command past reading tasks.csv has one. */
export type SettledSession = Session & { config: SessionConfig & { pipeline: PipelineName } };

/** What a command line may set over session.json. */
export interface SessionOverrides {
  /** The pipeline, whatever session.json says (`--pipeline`). */
  pipeline?: PipelineName;
}

/**
 * Opens a session from the folder or the path of its tasks.csv (any `.csv` file names its
 * own session: the folder it sits in). Reads session.json when present.
 */
export function openSession(pathArgument: string, overrides: SessionOverrides = {}): Session {
  const absolute = resolve(pathArgument);
  let tasksPath: string;
  if (existsSync(absolute) && statSync(absolute).isDirectory()) tasksPath = join(absolute, kLayout.tasks);
  else tasksPath = absolute;
  if (!existsSync(tasksPath)) {
    throw new WaveError(
      'IO',
      `No tasks file at ${tasksPath}: name a session folder holding tasks.csv, or the path of a tasks.csv`,
      { path: tasksPath },
    );
  }
  const dir = dirname(tasksPath);
  const { config, file } = readSessionFile(dir);
  if (overrides.pipeline !== undefined) config.pipeline = overrides.pipeline;
  return { dir, tasksPath, displayPath: displayPathOf(tasksPath), config, ...(file === undefined ? {} : { configFile: file }) };
}

/**
 * The one rule for the pipeline: `--pipeline`, else session.json's `pipeline`, else a
 * brainstorm session when every role is a brainstorm role (the seed's files) and generic
 * otherwise: a plain CSV with its own roles just runs.
 */
export function settlePipeline(session: Session, roles: Iterable<string>): PipelineName {
  session.config.pipeline ??= inferPipeline(roles);
  return session.config.pipeline;
}

function displayPathOf(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere === '' || fromHere.startsWith('..') ? path : fromHere;
}

/**
 * session.json parsed and checked; a session without one has none of its keys.
 * Problems are WaveError INVALID_SESSION in a compiler's terms: a syntax error as
 * `<path>:<line>:<column>: not valid JSON: …`, schema problems as violations at the line
 * of the key (unknown keys named, with the keys that exist).
 */
export function readSessionConfig(dir: string): SessionConfig {
  return readSessionFile(dir).config;
}

/** session.json parsed and checked (readSessionConfig), with its text. */
function readSessionFile(dir: string): { config: SessionConfig; file?: SettingsFile } {
  const path = join(dir, kLayout.config);
  if (!existsSync(path)) return { config: {} };
  const shown = displayPathOf(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new WaveError('IO', `Cannot read ${shown}: ${(error as Error).message}`, { path: shown, cause: error });
  }
  const problem = textProblem(bytes);
  if (problem !== undefined) {
    throw new WaveError('INVALID_SESSION', `${shown}:${problem.line}: ${problem.message}`, {
      path: shown,
      violations: [problem],
    });
  }
  // Notepad saves UTF-8 with a BOM; JSON.parse does not take one.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new WaveError('INVALID_SESSION', jsonSyntaxMessage(shown, text, error as Error), { path: shown, cause: error });
  }
  const parsed = sessionConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const violations = sessionViolations(parsed.error.issues, text, raw);
    throw new WaveError('INVALID_SESSION', formatViolations(shown, violations), { path: shown, violations });
  }
  return { config: parsed.data as SessionConfig, file: { shown, text } };
}
