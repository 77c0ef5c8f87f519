/**
 * The one error class of csv-wave (after csv-parse's CsvError): a stable string code
 * for programs, a message for people, and the context a person needs to act on it.
 * The CLI prints a WaveError's message alone; anything else is a bug and gets a stack.
 */
export type WaveErrorCode =
  /** A command-line flag or argument is wrong. */
  | 'USAGE'
  /** A file could not be read or written. */
  | 'IO'
  /** tasks.csv could not be rewritten (a full disk, a read-only folder): the old file and the journal were kept. */
  | 'WRITE_FAILED'
  /** tasks.csv is not well-formed CSV. */
  | 'CSV_PARSE'
  /** tasks.csv lacks a column every task needs. */
  | 'CSV_MISSING_COLUMN'
  /** tasks.csv parsed, but rows break the rules of DESIGN.md section 3. */
  | 'INVALID_TASKS'
  /** The dependency graph has a cycle. */
  | 'WAVE_CYCLE'
  /** session.json is not valid. */
  | 'INVALID_SESSION'
  /** The executor cannot run any task: a missing module, a program not on PATH, a template that cannot be quoted. */
  | 'INVALID_EXECUTOR'
  /** Another run holds the session's lock. */
  | 'SESSION_LOCKED'
  /** A person saved tasks.csv while a command read it before its first write: nothing was done. */
  | 'TASKS_EDITED'
  /** The Redis of `--backend bullmq` or of `csv-wave worker` does not answer at start. */
  | 'REDIS_UNREACHABLE'
  /** The Redis of `--backend bullmq` refuses writes at the run's start: full (maxmemory with noeviction), a failed save, a replica. */
  | 'REDIS_REFUSES_WRITES';

/** One violation of the rules, tied to the file line where the offending row starts. */
export interface Violation {
  line: number;
  message: string;
}

export class WaveError extends Error {
  override readonly name = 'WaveError';
  readonly code: WaveErrorCode;
  /** The file the error is about, as the user named it. */
  readonly path: string | undefined;
  /** Every violation found, for errors that collect them (INVALID_TASKS, CSV_PARSE). */
  readonly violations: readonly Violation[];

  constructor(
    code: WaveErrorCode,
    message: string,
    context: { path?: string; violations?: readonly Violation[]; cause?: unknown } = {},
  ) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.path = context.path;
    this.violations = context.violations ?? [];
  }
}

/** Formats violations as `file:line: message`, one per line, the way compilers do. */
export function formatViolations(displayPath: string, violations: readonly Violation[]): string {
  return violations.map((v) => `${displayPath}:${v.line}: ${v.message}`).join('\n');
}
