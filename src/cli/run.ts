import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import { RunEmitter } from '../engine/events.js';
import { WaveError } from '../errors.js';
import { AnswerFile, AutoAnswers, NoAnswers, TerminalAnswers } from '../interactive/answers.js';
import type { AnswerSource } from '../interactive/types.js';
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
  const interrupted = io === processIo ? onFirstSignal(io) : undefined;
  try {
    const options: RunSessionOptions = { ...runOptionsFromFlags(flags), ...extra, events, answers: answerSource(flags, io) };
    if (interrupted) options.signal = interrupted.signal;
    const summary = await runSession(sessionPath, options);
    if (flags.json) printJson(io, summary);
    // As a shell reports a process a signal ended: 130 after Ctrl-C, 143 after SIGTERM.
    const received = interrupted?.received();
    return summary.stopped === 'signal' && received ? 128 + osConstants.signals[received] : summary.exitCode;
  } finally {
    interrupted?.dispose();
  }
}

/** The discussion gate asks the answers file, or answers Done (--auto), or asks a person at a terminal. */
function answerSource(flags: RunFlags, io: CliIo): AnswerSource {
  if (flags.answers !== undefined && flags.auto) throw new WaveError('USAGE', 'Pass either --answers FILE or --auto, not both');
  if (flags.answers !== undefined) return new AnswerFile(flags.answers);
  if (flags.auto) return new AutoAnswers();
  return io === processIo && process.stdin.isTTY === true ? new TerminalAnswers() : new NoAnswers();
}

/**
 * The first Ctrl-C (or SIGTERM) stops the run gently: no new task, running ones finish and
 * are recorded, so that nothing is lost and no command is left running unwatched. A second
 * one ends csv-wave at once (the default action, as the handlers are gone by then); the
 * journal keeps what was recorded, and `resume` goes on.
 */
function onFirstSignal(io: CliIo): { signal: AbortSignal; received: () => NodeJS.Signals | undefined; dispose: () => void } {
  const controller = new AbortController();
  let received: NodeJS.Signals | undefined;
  const handler = (signal: NodeJS.Signals) => {
    received = signal;
    dispose();
    io.stderr(`\n${signal}: stopping after the running tasks finish; press Ctrl-C again to quit at once\n`);
    controller.abort();
  };
  const dispose = () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return { signal: controller.signal, received: () => received, dispose };
}
