import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { showCell } from '../csv/columns.js';
import { textProblem } from '../csv/utf8-text.js';
import { WaveError, formatViolations, type Violation } from '../errors.js';
import { inferPipeline } from '../pipelines/roles.js';
import { sessionConfigSchema, type PipelineName, type SessionConfig } from '../schema/session.js';

/** Where a session's files are, and its settings. */
export interface Session {
  /** Absolute path of the session folder. */
  dir: string;
  /** Absolute path of the master tasks.csv. */
  tasksPath: string;
  /** The tasks file as error messages show it: relative to the working folder when inside it. */
  displayPath: string;
  config: SessionConfig;
  /**
   * Whether the pipeline was named (`--pipeline`, or `pipeline` in session.json). When it
   * was not, settlePipeline picks it from the roles once tasks.csv is read.
   */
  pipelineNamed: boolean;
}

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
  const { config, pipelineNamed } = readSessionFile(dir);
  if (overrides.pipeline !== undefined) config.pipeline = overrides.pipeline;
  return { dir, tasksPath, displayPath: displayPathOf(tasksPath), config, pipelineNamed: pipelineNamed || overrides.pipeline !== undefined };
}

/**
 * A session that names no pipeline is a brainstorm session when every role is a brainstorm
 * role (the seed's files), and generic otherwise: a plain CSV with its own roles just runs.
 */
export function settlePipeline(session: Session, roles: Iterable<string>): void {
  if (!session.pipelineNamed) session.config.pipeline = inferPipeline(roles);
}

function displayPathOf(path: string): string {
  const fromHere = relative(process.cwd(), path);
  return fromHere === '' || fromHere.startsWith('..') ? path : fromHere;
}

/**
 * session.json parsed and checked; a session without one gets the defaults (brainstorm).
 * Problems are WaveError INVALID_SESSION in a compiler's terms: a syntax error as
 * `<path>:<line>:<column>: not valid JSON: …`, schema problems as violations at the line
 * of the key (unknown keys named, with the keys that exist).
 */
export function readSessionConfig(dir: string): SessionConfig {
  return readSessionFile(dir).config;
}

/** session.json checked (see readSessionConfig), and whether it names the pipeline. */
function readSessionFile(dir: string): { config: SessionConfig; pipelineNamed: boolean } {
  const path = join(dir, 'session.json');
  if (!existsSync(path)) return { config: sessionConfigSchema.parse({}), pipelineNamed: false };
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
    const { line, column } = positionOf(text, jsonErrorOffset(text));
    const detail = jsonErrorDetail((error as Error).message);
    throw new WaveError(
      'INVALID_SESSION',
      `${shown}:${line}:${column}: not valid JSON: ${detail}: fix it, or delete session.json to use the defaults`,
      { path: shown, cause: error },
    );
  }
  const parsed = sessionConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const violations: Violation[] = [];
    for (const issue of parsed.error.issues) {
      const where = issue.path.map(String);
      if (issue.code === 'unrecognized_keys') {
        const known = Object.keys(objectShapeAt(where) ?? {});
        for (const key of issue.keys) {
          const name = [...where, key].join('.');
          const near = nearestKey(key, known);
          const hint = near === undefined ? `known keys: ${known.join(', ')}` : `did you mean ${near}?`;
          violations.push({ line: lineOfKey(text, key), message: `Unknown key: ${showCell(name)} (${hint})` });
        }
      } else {
        const name = where.length > 0 ? where.join('.') : '(top level)';
        const key = where.at(-1);
        violations.push({ line: key === undefined ? 1 : lineOfKey(text, key), message: `${showCell(name)}: ${issue.message}` });
      }
    }
    violations.sort((a, b) => a.line - b.line);
    throw new WaveError('INVALID_SESSION', formatViolations(shown, violations), { path: shown, violations });
  }
  return { config: parsed.data, pipelineNamed: (raw as { pipeline?: unknown }).pipeline !== undefined };
}

/** The keys an object in session.json may have, found by walking the schema along `path`. */
function objectShapeAt(path: readonly string[]): Record<string, unknown> | undefined {
  let schema: z.ZodType = sessionConfigSchema;
  for (const key of ['', ...path]) {
    while (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) schema = schema.unwrap() as z.ZodType;
    if (!(schema instanceof z.ZodObject)) return undefined;
    if (key === '') continue;
    const next = (schema.shape as Record<string, z.ZodType | undefined>)[key];
    if (next === undefined) return undefined;
    schema = next;
  }
  while (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) schema = schema.unwrap() as z.ZodType;
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>) : undefined;
}

/** The known key a typo most likely meant: at most two edits away, or differing only in case. */
function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, name);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance (keys are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The line where `"key":` first appears, for a message that points at it; 1 if it is not found. */
function lineOfKey(text: string, key: string): number {
  const pattern = new RegExp(`${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*:`);
  const at = pattern.exec(text)?.index;
  return at === undefined ? 1 : positionOf(text, at).line;
}

/** 1-based line and column of a character offset. */
function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = 0; at < offset && at < text.length; at++) {
    if (text[at] === '\n') {
      line++;
      lineStart = at + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * V8's message without the parts that vary by Node version (the position, the quoted
 * text), on one line: a token it names may be a line break.
 */
function jsonErrorDetail(message: string): string {
  return message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/^Unexpected end of JSON input$/, 'unexpected end of the file')
    .replace(/\p{Cc}/gu, (char) => JSON.stringify(char).slice(1, -1));
}

/**
 * Offset of the first JSON syntax error in text (which JSON.parse refused). V8 says the
 * position for most errors but not all, and not the same way in every Node version, so the
 * text is scanned here: a plain recursive descent over RFC 8259.
 */
function jsonErrorOffset(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new JsonSyntaxAt(at);
  };
  const space = () => {
    while (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r') at++;
  };
  const string = () => {
    at++; // the opening quote
    for (;;) {
      const char = text[at];
      if (char === undefined || char < ' ') fail();
      if (char === '"') {
        at++;
        return;
      }
      if (char === '\\') {
        const escape = text[at + 1];
        if (escape !== undefined && '"\\/bfnrt'.includes(escape)) at += 2;
        else if (escape === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(at + 2, at + 6))) at += 6;
        else {
          at++;
          fail();
        }
      } else at++;
    }
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      at++;
      space();
      if (text[at] === close) {
        at++;
        return;
      }
      for (;;) {
        if (char === '{') {
          space();
          if (text[at] !== '"') fail();
          string();
          space();
          if (text[at] !== ':') fail();
          at++;
        }
        value();
        space();
        if (text[at] === ',') at++;
        else if (text[at] === close) {
          at++;
          return;
        } else fail();
      }
    }
    if (char === '"') return string();
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = at;
    if (number.test(text)) {
      at = number.lastIndex;
      return;
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) {
        at += literal.length;
        return;
      }
    }
    fail();
  };
  try {
    value();
    space();
    if (at < text.length) fail();
  } catch (error) {
    if (error instanceof JsonSyntaxAt) return error.offset;
    if (error instanceof RangeError) return at; // nested too deep to scan
    throw error;
  }
  return text.length;
}

class JsonSyntaxAt extends Error {
  constructor(readonly offset: number) {
    super(`JSON syntax error at ${offset}`);
  }
}
