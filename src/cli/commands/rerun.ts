import type { Command } from 'commander';
import { WaveError } from '../../errors.js';
import type { RerunSelection } from '../../commands/rerun.js';
import { previewRerun } from '../../run/prepare-run.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { runWithReporter } from './run.js';
import { addRunFlags, runOptionsFromFlags, type RunFlags } from '../run-flags.js';
import { sessionOverrides } from '../pipeline-flag.js';

interface RerunFlags extends RunFlags {
  failed?: boolean;
  stale?: boolean;
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
      .option('--failed', 'failed tasks (they execute) and the tasks skipped because of them (from the cache when their inputs are unchanged)')
      .option('--stale', 'completed tasks whose inputs changed since their result was made (status marks them [STALE])')
      .option('--wave <n...>', 'every task of these waves')
      .option('--task <id...>', 'these tasks (they execute, whatever the cache holds)')
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
      stale: flags.stale ?? false,
      cascade: flags.cascade,
    };
    if (!selection.failed && !selection.stale && selection.waves!.length === 0 && selection.tasks!.length === 0) {
      throw new WaveError('USAGE', 'rerun needs --failed, --stale, --wave N or --task ID');
    }
    if (flags.dryRun) {
      // The rerun itself starts from tasks.csv brought up to date by the journal: list from there too.
      const rerun = previewRerun(sessionPath, { ...(selection.stale ? runOptionsFromFlags(flags) : {}), ...sessionOverrides(flags) }, selection, (message) =>
        io.stderr(`warning: ${message}\n`),
      );
      if (flags.json) printJson(io, { chosen: rerun.chosen, forced: rerun.forced, cascaded: rerun.cascaded, ...(selection.stale ? { stale: rerun.stale } : {}) });
      else {
        const why = new Map(rerun.stale.map((task) => [task.id, task.changes.join('; ')]));
        const forced = new Set(rerun.forced);
        io.stdout(`Would reset ${rerun.chosen.length + rerun.cascaded.length} task(s):\n`);
        // Dependents, and the skipped tasks of --failed, take a cached result when their inputs are unchanged.
        for (const id of rerun.chosen) io.stdout(`  ${id}${forced.has(id) ? '' : ' (skipped)'}${why.has(id) ? ` (stale: ${why.get(id)})` : ''}\n`);
        for (const id of rerun.cascaded) io.stdout(`  ${id} (dependent)\n`);
      }
      done(ExitCode.Ok);
      return;
    }
    done(await runWithReporter(sessionPath, flags, io, { rerun: selection }));
  });
}
