import type { Command } from 'commander';
import { RunEmitter } from '../engine/events.js';
import { runSession, type RunSessionOptions } from '../engine/run-session.js';
import { printJson, processIo, type CliIo } from './io.js';
import { attachReporter } from './progress.js';
import { addRunFlags, runOptionsFromFlags, type RunFlags } from './run-flags.js';

export function registerRun(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('run')
      .description('run every pending task of a session, wave after wave, and write the results back')
      .argument('<session>', 'session folder, or the path of its tasks.csv'),
  ).action(async (sessionPath: string, flags: RunFlags) => {
    done(await runWithReporter(sessionPath, flags, io, {}));
  });
}

/** Runs a session with the CLI's reporter attached; resolves to the exit code. */
export async function runWithReporter(
  sessionPath: string,
  flags: RunFlags,
  io: CliIo,
  extra: Pick<RunSessionOptions, 'prepare'>,
): Promise<number> {
  const events = new RunEmitter();
  const tty = io === processIo && process.stderr.isTTY === true;
  attachReporter(events, io, flags.json ? 'json' : tty ? 'tty' : 'lines');
  const summary = await runSession(sessionPath, { ...runOptionsFromFlags(flags), ...extra, events });
  if (flags.json) printJson(io, summary);
  return summary.exitCode;
}
