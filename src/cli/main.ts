import { Command, CommanderError } from 'commander';
import { WaveError, formatViolations } from '../errors.js';
import { addCommandHelp } from './command-help.js';
import { registerCache } from './commands/cache.js';
import { registerEstimate } from './commands/estimate.js';
import { registerExplain } from './commands/explain.js';
import { registerGraph } from './commands/graph.js';
import { registerInit } from './commands/init.js';
import { ExitCode, printJson, processIo, type CliIo } from './io.js';
import { registerPlan } from './commands/plan.js';
import { registerRerun } from './commands/rerun.js';
import { registerReport } from './commands/report.js';
import { registerServe } from './commands/serve.js';
import { registerRevise } from './commands/revise.js';
import { registerResume } from './commands/resume.js';
import { registerRun } from './commands/run.js';
import { registerStatus } from './commands/status.js';
import { registerValidate } from './commands/validate.js';
import { registerWorker } from './commands/worker.js';
import { kVersion } from '../version.js';

/** Exit code for each kind of WaveError; anything not listed is invalid input (2). */
const kExitCodeByError: Partial<Record<WaveError['code'], number>> = {
  SESSION_LOCKED: ExitCode.Locked,
  TASKS_EDITED: ExitCode.Locked,
  // Like a run stopped by a session folder it cannot write: the user frees space and resumes.
  WRITE_FAILED: ExitCode.TasksFailed,
};

/**
 * Runs the csv-wave command line and resolves to the exit code; it never calls
 * process.exit, so tests call it directly (zx style).
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode: number = ExitCode.Ok;
  const done = (code: number) => {
    exitCode = code;
  };
  const program = new Command('csv-wave')
    .description('Run batches of tasks from one tasks.csv, in dependency waves')
    .version(kVersion, '-V, --version')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const register of [registerInit, registerValidate, registerPlan, registerStatus, registerExplain, registerEstimate, registerGraph, registerRun, registerResume, registerRerun, registerRevise, registerCache, registerReport, registerServe, registerWorker]) register(program, io, done);
  for (const command of program.commands) command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  addCommandHelp(program);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      const benign = ['commander.helpDisplayed', 'commander.version', 'commander.help'];
      return benign.includes(error.code) ? ExitCode.Ok : ExitCode.InvalidInput;
    }
    if (error instanceof WaveError) {
      reportWaveError(error, argv.includes('--json'), io);
      return kExitCodeByError[error.code] ?? ExitCode.InvalidInput;
    }
    io.stderr(`csv-wave: internal error (please report it):\n${(error as Error)?.stack ?? String(error)}\n`);
    return ExitCode.Internal;
  }
}

function reportWaveError(error: WaveError, json: boolean, io: CliIo): void {
  const file = error.path ?? 'tasks.csv';
  if (json) {
    printJson(io, {
      ok: false,
      code: error.code,
      error: error.message,
      violations: error.violations.map((v) => ({ file, line: v.line, message: v.message })),
    });
    return;
  }
  const text = error.violations.length > 0 ? formatViolations(file, error.violations) : error.message;
  io.stderr(`${text}\n`);
}
