import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { runWithReporter } from './run.js';
import { addRunFlags, type RunFlags } from '../run-flags.js';

export function registerResume(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('resume')
      .description('go on after a crash or a stop: apply the journal, put in-progress tasks back to pending, run the rest')
      .argument('<session>', 'session folder, or the path of its tasks.csv'),
  ).action(async (sessionPath: string, flags: RunFlags) => {
    // run recovers the same way; resume is the name a person looks for after a crash.
    done(await runWithReporter(sessionPath, flags, io, {}));
  });
}
