/**
 * Where an attempt works when it is not the session folder (`--workdir`), as the request
 * carries it to the process that runs the attempt: plain JSON, made by the run
 * (run/workdir/workdir-setup.ts). That process makes the folder or the worktree itself, so
 * a `csv-wave worker` on another machine makes its own (it needs the repository at the
 * same path).
 */
export type WorkdirPlan =
  /** `workdirs/<id>` under the attempt's session folder (a worker's job folder on a worker), emptied first. */
  | { mode: 'task' }
  | WorktreePlan;

/** A git worktree for one task, on a branch of its own, from the run's base commit. */
export interface WorktreePlan {
  mode: 'worktree';
  /** The repository's top folder (the main worktree), where git commands about worktrees run. */
  repo: string;
  /** The commit every worktree of the run starts from (`--base`, resolved once). */
  base: string;
  /** `csv-wave/<session id>/<task id>`. */
  branch: string;
  /** Where an earlier finished attempt's branch is kept when a new attempt replaces it: `csv-wave-replaced/<session id>/<task id>`, then `/<n>`. */
  replaced: string;
  /** The worktree's folder: `<session>/worktrees/<task id>`. */
  path: string;
  /** --keep-worktrees: keep (and lock) the worktree after the attempt. */
  keep: boolean;
}

/** The branch of task `taskId` in session `sessionId`. */
export function worktreeBranch(sessionId: string, taskId: string): string {
  return `csv-wave/${sessionId}/${taskId}`;
}

/** The prefix of every branch of the session's worktrees. */
export function worktreeBranchPrefix(sessionId: string): string {
  return `csv-wave/${sessionId}/`;
}

/** Where replaced branches of the task go (`<prefix>/<n>`). */
export function replacedBranchPrefix(sessionId: string, taskId: string): string {
  return `csv-wave-replaced/${sessionId}/${taskId}`;
}

/** The name of the patch artifact a worktree attempt records: `artifacts/<id>/changes.patch`. */
export const kChangesArtifact = 'changes.patch';

/** The reason a kept worktree is locked with: a later run leaves a locked worktree alone. */
export const kKeptReason = 'csv-wave: kept by --keep-worktrees';
