import type { Command } from 'commander';
import { explainLine, type NextStep, type TaskPlan } from '../../cache/next-run.js';
import { WaveError } from '../../errors.js';
import { previewRun } from '../../run/prepare-run.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { sessionOverrides } from '../pipeline-flag.js';
import { addRunFlags, runOptionsFromFlags, type RunFlags } from '../run-flags.js';

export function registerExplain(program: Command, io: CliIo, done: (code: number) => void): void {
  addRunFlags(
    program
      .command('explain')
      .description('for each task, what the next run would do and why (up to date, will run, from cache, blocked by …); writes nothing')
      .argument('<session>', 'session folder, or the path of its tasks.csv')
      .argument('[tasks...]', 'only these task ids'),
    'print {"tasks": [{id, role, step, explanation, …the step\'s details}]}',
  ).action(async (sessionPath: string, ids: string[], flags: RunFlags) => {
    // The flags are the run's: explain says what `run` with the same flags would do.
    const preview = previewRun(sessionPath, { ...runOptionsFromFlags(flags), ...sessionOverrides(flags) }, (message) => io.stderr(`warning: ${message}\n`));
    const tasks = chosenTasks(preview.plan.tasks, ids, sessionPath);
    if (flags.json) {
      printJson(io, { tasks: tasks.map((task) => ({ id: task.id, role: task.role, ...stepJson(task.next), explanation: explainLine(task) })) });
    } else {
      const width = Math.min(24, Math.max(0, ...tasks.map((task) => task.id.length)));
      for (const task of tasks) io.stdout(`${task.id.padEnd(width)}  ${explainLine(task)}\n`);
    }
    done(ExitCode.Ok);
  });
}

/** The tasks named, in the order named; every task without names. Unknown ids are a usage error naming them. */
function chosenTasks(tasks: readonly TaskPlan[], ids: readonly string[], sessionPath: string): TaskPlan[] {
  if (ids.length === 0) return [...tasks];
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const unknown = ids.filter((id) => !byId.has(id));
  if (unknown.length > 0) {
    throw new WaveError('USAGE', `No task ${unknown.join(', ')} in ${sessionPath}: give ids of tasks.csv (\`csv-wave status ${sessionPath}\` lists them)`);
  }
  return [...new Set(ids)].map((id) => byId.get(id)!);
}

/** A step as `--json` shows it: its kind and details, snake_case, without the cached entry's request list. */
function stepJson(next: NextStep): Record<string, unknown> {
  switch (next.step) {
    case 'cached':
      return { step: 'cached', created_at: next.createdAt, saved_usd: next.savedUsd };
    case 'run':
      return { step: 'run', interrupted: next.interrupted, after: next.after, no_cache: typeof next.noCache === 'object' ? 'never' : next.noCache };
    case 'blocked':
      return { step: 'blocked', by: next.by, by_status: next.byStatus };
    case 'skipped':
      return { step: 'skipped', error: next.error, for_failure: next.forFailure };
    default:
      return { ...next };
  }
}
