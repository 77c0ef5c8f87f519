import type { Command } from 'commander';
import { editSession } from '../../session/edit-session.js';
import { applyRevision, planRevision } from '../../commands/revise.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { addPipelineFlag, sessionOverrides } from '../pipeline-flag.js';
import type { PipelineName } from '../../schema/session.js';

interface ReviseFlags {
  feedback: string;
  dryRun?: boolean;
  json?: boolean;
  pipeline?: PipelineName;
}

export function registerRevise(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(program
    .command('revise')
    .description("add a revision task for a task, carrying feedback; its dependents depend on the revision and go back to pending")
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .argument('<task-id>', 'the task to revise')
    .requiredOption('--feedback <text>', 'what the revision should change')
    .option('--dry-run', 'only list the changes')
    .option('--json', 'print {revision, rewired, reset, written}'))
    .action((sessionPath: string, taskId: string, flags: ReviseFlags) => {
      const plan = editSession(
        sessionPath,
        (table) => {
          const revision = planRevision(table.rows, taskId, flags.feedback);
          if (!flags.dryRun) applyRevision(table.rows, taskId, revision);
          return { write: !flags.dryRun, result: revision };
        },
        (message) => io.stderr(`warning: ${message}\n`),
        sessionOverrides(flags),
      );
      if (flags.json) {
        printJson(io, { revision: plan.revision.id, rewired: plan.rewired, reset: plan.reset, written: !flags.dryRun });
      } else {
        const verb = flags.dryRun ? 'Would add' : 'Added';
        io.stdout(`${verb} ${plan.revision.id} (revises ${taskId}, role ${plan.revision.role})\n`);
        for (const id of plan.rewired) io.stdout(`  ${id} now depends on ${plan.revision.id}\n`);
        io.stdout(`  ${flags.dryRun ? 'would reset' : 'reset'} to pending: ${plan.reset.length === 0 ? 'nothing' : plan.reset.join(', ')}\n`);
        if (!flags.dryRun) io.stdout(`Run it with: csv-wave run ${sessionPath}\n`);
      }
      done(ExitCode.Ok);
    });
}
