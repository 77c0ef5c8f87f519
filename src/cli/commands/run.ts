import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import { RunEmitter } from '../../events/events.js';
import { WaveError } from '../../errors.js';
import { errorLine } from '../../text/error-line.js';
import { capHeapGrowth, kBigRunTasks } from '../../process/heap-growth.js';
import { AnswerFile, AutoAnswers, NoAnswers, TerminalAnswers } from '../../interactive/answers.js';
import type { AnswerSource } from '../../interactive/types.js';
import { htmlReport } from '../../report/run-reporter.js';
import { runSession, type RunSessionOptions } from '../../run/run-session.js';
import { ExitCode, printJson, processIo, type CliIo } from '../io.js';
import { printDryRun } from './estimate.js';
import { onOutputLost, type OutputName } from '../process-output.js';
import { attachReporter } from '../progress.js';
import { addRunFlags, graceFromFlags, runOptionsFromFlags, type RunFlags } from '../run-flags.js';
import { sessionOverrides } from '../pipeline-flag.js';
import { backendFromFlags } from '../backend-flag.js';

export function registerRun(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('run')
      .description('run every pending task of a session, wave after wave, and write the results back')
      .argument('<session>', 'session folder, or the path of its tasks.csv')
      .option('--dry-run', 'print each command or prompt the run would send (as parallel --dry-run does), then the estimate (as `csv-wave estimate`); run nothing, write nothing'),
  ).action(async (sessionPath: string, flags: RunFlags & { dryRun?: boolean }) => {
    if (flags.dryRun) {
      printDryRun(sessionPath, flags, io);
      done(ExitCode.Ok);
      return;
    }
    done(await runWithReporter(sessionPath, flags, io, {}));
  });
}

/** Runs a session with the CLI's reporter attached; resolves to the exit code. */
export async function runWithReporter(
  sessionPath: string,
  flags: RunFlags,
  io: CliIo,
  extra: Pick<RunSessionOptions, 'prepare' | 'rerun'>,
): Promise<number> {
  const events = new RunEmitter();
  // With --json, the tasks that failed in this run, each with its class and its error's line.
  const failed: { id: string; error_class: string; error: string }[] = [];
  if (flags.json) {
    events.on('task:done', (event) => {
      if (event.status === 'failed') failed.push({ id: event.id, error_class: event.errorClass ?? 'task-failure', error: errorLine(event.error) });
    });
  }
  // This process is the CLI's own: a big run keeps its peak near what is alive (see there).
  if (io === processIo) {
    events.on('run:start', (event) => {
      if (event.total >= kBigRunTasks) capHeapGrowth();
    });
  }
  const tty = io === processIo && process.stderr.isTTY === true;
  const detachReporter = attachReporter(events, io, flags.json ? 'json' : tty ? 'tty' : 'lines');
  const interrupted = io === processIo ? onSignals(io, graceFromFlags(flags)) : undefined;
  const stopWatchingOutput = io === processIo ? onOutputLost((name, code) => events.emit('warning', lostOutputNote(name, code))) : undefined;
  try {
    const options: RunSessionOptions = { ...runOptionsFromFlags(flags), ...extra, ...sessionOverrides(flags), ...backendFromFlags(flags), events, answers: answerSource(flags, io), report: htmlReport };
    if (interrupted) {
      options.signal = interrupted.signal;
      options.killSignal = interrupted.killSignal;
    }
    const summary = await runSession(sessionPath, options);
    if (flags.json) printJson(io, { ...summary, failed });
    // As a shell reports a process a signal ended: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP.
    const received = interrupted?.received();
    return summary.stopped === 'signal' && received ? 128 + osConstants.signals[received] : summary.exitCode;
  } finally {
    interrupted?.dispose();
    stopWatchingOutput?.();
    detachReporter();
  }
}

/** Said on the other stream (if it still works) when stdout or stderr fails during a run. */
function lostOutputNote(name: OutputName, code: string): string {
  return `${name} failed (${code}): the run goes on without printing there; every result still goes to tasks.csv`;
}

/** The discussion gate asks the answers file, or answers Done (--auto), or asks a person at a terminal. */
function answerSource(flags: RunFlags, io: CliIo): AnswerSource {
  if (flags.answers !== undefined && flags.auto) throw new WaveError('USAGE', 'Pass either --answers FILE or --auto, not both');
  if (flags.answers !== undefined) return new AnswerFile(flags.answers);
  if (flags.auto) return new AutoAnswers();
  return io === processIo && process.stdin.isTTY === true ? new TerminalAnswers() : new NoAnswers();
}

/** Signals that stop a run gently; SIGHUP is the terminal closing, which must not lose the run. */
const kStopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The first Ctrl-C (or SIGTERM, or SIGHUP) stops the run gently: no new task starts, and running ones
 * get the grace to finish and be recorded; then they are killed (a command with its whole
 * process group) and put back to pending, so that nothing is left running unwatched. A
 * second signal ends the grace at once. A third ends csv-wave at once (the default action,
 * as the handlers are gone by then); the journal keeps what was recorded, and `resume`
 * goes on. The exit code names the first signal.
 */
function onSignals(
  io: CliIo,
  graceSeconds: number,
): { signal: AbortSignal; killSignal: AbortSignal; received: () => NodeJS.Signals | undefined; dispose: () => void } {
  const stop = new AbortController();
  const kill = new AbortController();
  let received: NodeJS.Signals | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (received === undefined) {
      received = signal;
      io.stderr(
        `\n${signal}: stopping: no new task starts; running tasks get ${graceSeconds}s to finish, then they are stopped ` +
          `and put back to pending. Press Ctrl-C again to stop them now.\n`,
      );
      stop.abort();
      return;
    }
    dispose();
    io.stderr(`\n${signal}: stopping the running tasks now; they go back to pending (once more quits at once)\n`);
    kill.abort();
  };
  const dispose = () => {
    for (const name of kStopSignals) process.off(name, handler);
  };
  for (const name of kStopSignals) process.on(name, handler);
  return { signal: stop.signal, killSignal: kill.signal, received: () => received, dispose };
}
