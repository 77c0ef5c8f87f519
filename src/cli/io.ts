import { writeOutput } from './process-output.js';

/** Where a command writes; tests pass their own to capture output. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const processIo: CliIo = {
  stdout: (text) => writeOutput('stdout', text),
  stderr: (text) => writeOutput('stderr', text),
};

/** Exit codes of every command (DESIGN.md section 3). */
export const ExitCode = {
  /** Success, including tasks skipped because a GC check converged. */
  Ok: 0,
  /** The run ended with failed tasks, or tasks skipped because of a failure. */
  TasksFailed: 1,
  /** Invalid input or usage: violations, unreadable file, bad flag. */
  InvalidInput: 2,
  /** The session is locked by another run, or its tasks.csv changed under the run. */
  Locked: 3,
  /** A bug in csv-wave itself (the message comes with a stack). */
  Internal: 70,
} as const;

export function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}
