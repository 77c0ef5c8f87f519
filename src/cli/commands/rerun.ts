import type { Command } from 'commander';
import { WaveError } from '../../errors.js';
import { recoverRows } from '../../session/journal.js';
import { loadSession } from '../../session/load.js';
import { checkSessionOwner } from '../../session/session-owner.js';
import { planRerun, resetTasks, type RerunSelection } from '../../commands/rerun.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { runWithReporter } from './run.js';
import { addRunFlags, type RunFlags } from '../run-flags.js';
import { sessionOverrides } from '../pipeline-flag.js';

interface RerunFlags extends RunFlags {
  failed?: boolean;
  wave?: string[];
  task?: string[];
  cascade: boolean;
  dryRun?: boolean;
}

export function registerRerun(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('rerun')
      .description('reset chosen tasks (and, unless --no-cascade, their dependents) to pending, then run like `run`')
      .argument('<session>', 'session folder, or the path of its tasks.csv')
      .option('--failed', 'failed tasks and the tasks skipped because of them')
      .option('--wave <n...>', 'every task of these waves')
      .option('--task <id...>', 'these tasks (always run again)')
      .option('--no-cascade', 'keep the results of completed dependents (tasks skipped because of the chosen ones still go back to pending)')
      .option('--dry-run', 'only list what would be reset'),
  ).action(async (sessionPath: string, flags: RerunFlags) => {
    const selection: RerunSelection = {
      failed: flags.failed ?? false,
      waves: (flags.wave ?? []).map((text) => {
        const wave = Number(text);
        if (!Number.isInteger(wave)) throw new WaveError('USAGE', `Expected \`--wave\` to be a wave number, got \`${text}\``);
        return wave;
      }),
      tasks: flags.task ?? [],
      cascade: flags.cascade,
    };
    if (!selection.failed && selection.waves!.length === 0 && selection.tasks!.length === 0) {
      throw new WaveError('USAGE', 'rerun needs --failed, --wave N or --task ID');
    }
    if (flags.dryRun) {
      const { session, table, plan } = loadSession(sessionPath, sessionOverrides(flags));
      checkSessionOwner(session);
      // The rerun itself starts from tasks.csv brought up to date by the journal: list from there too.
      recoverRows(table.rows, session.dir);
      const rerun = planRerun(table.rows, plan.waves, selection);
      if (flags.json) printJson(io, rerun);
      else {
        io.stdout(`Would reset ${rerun.chosen.length + rerun.cascaded.length} task(s):\n`);
        for (const id of rerun.chosen) io.stdout(`  ${id}\n`);
        for (const id of rerun.cascaded) io.stdout(`  ${id} (dependent)\n`);
      }
      done(ExitCode.Ok);
      return;
    }
    done(
      await runWithReporter(sessionPath, flags, io, {
        prepare: (rows, waves) => {
          const rerun = planRerun(rows, waves, selection);
          const ids = [...rerun.chosen, ...rerun.cascaded];
          resetTasks(rows, ids);
          return ids;
        },
      }),
    );
  });
}
