import { showCell } from '../../csv/columns.js';
import type { TasksTable } from '../../csv/tasks-table.js';
import type { Violation } from '../../errors.js';
import type { ExecutorSpec } from '../../executors/messages.js';
import { isRefComponent } from '../../executors/workdir/git.js';
import { agentSettingsProblems, type AgentSettingsFiles } from '../../options/agent-settings-check.js';
import type { PipelineName } from '../../schema/session.js';
import { validateTasks } from '../validate.js';

/** What a run's start checked its tasks with: the same checks apply to a save merged during it. */
export interface StartChecks {
  pipeline: PipelineName;
  executor: ExecutorSpec;
  /** tasks.csv and session.json as messages name them. */
  files: AgentSettingsFiles;
  /** `--workdir worktree`: every task id names a git branch. */
  worktree: boolean;
}

/**
 * The checks of a run's start over a table, as violations of tasks.csv at their lines:
 * DESIGN.md section 3's rules (validate.ts), the rows' agent settings, and with
 * `--workdir worktree` ids that can name a branch. session.json's own problems (a role
 * entry no task has any more) are not the save's to fix, and are left out.
 */
export function startChecks(setup: StartChecks): (table: TasksTable) => Violation[] {
  return (table) => {
    const violations = [...validateTasks(table, setup.pipeline).violations];
    violations.push(...agentSettingsProblems(setup.executor, table.rows, setup.files, setup.pipeline).tasks);
    if (setup.worktree) {
      for (const row of table.rows) {
        if (!isRefComponent(row.id)) violations.push({ line: row.line, message: `Invalid task ID for --workdir worktree: ${showCell(row.id)} cannot name a git branch (it may not start or end with '.', hold '..' or end with '.lock')` });
      }
    }
    return violations.sort((a, b) => a.line - b.line);
  };
}
