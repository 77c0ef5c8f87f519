import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { taskWorkdir } from '../../layout.js';
import type { TaskInput } from '../types.js';
import type { WorkdirPlan } from './workdir-plan.js';
import type { Workplace } from './workplace.js';

export type { WorkdirPlan, WorktreePlan } from './workdir-plan.js';
export type { Workplace } from './workplace.js';
export {
  kChangesArtifact,
  kKeptReason,
  replacedBranchPrefix,
  worktreeBranch,
  worktreeBranchPrefix,
} from './workdir-plan.js';

/**
 * Makes the folder an attempt works in, in the process that runs it: `workdirs/<id>` under
 * the attempt's session folder, emptied, or the task's git worktree. The git code is
 * loaded only for a worktree: the launcher that forks commands stays small.
 */
export async function openWorkplace(plan: WorkdirPlan, task: TaskInput): Promise<Workplace> {
  if (plan.mode === 'worktree') {
    const { openWorktree } = await import('./worktree.js');
    return openWorktree(plan, task);
  }
  const dir = join(task.session, taskWorkdir(task.id));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return { dir, notes: [], finish: (outcome) => Promise.resolve(outcome) };
}
