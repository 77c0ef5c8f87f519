import { join } from 'node:path';
import { WaveError } from '../../errors.js';
import { taskWorktree } from '../../layout.js';
import type { WorkdirMode } from '../../option-table.js';
import { git, GitError, isRefComponent } from '../../executors/workdir/git.js';
import {
  kChangesArtifact,
  replacedBranchPrefix,
  worktreeBranch,
  worktreeBranchPrefix,
  type WorkdirPlan,
} from '../../executors/workdir/index.js';
import { listWorktrees, removeWorktree } from '../../executors/workdir/worktree-list.js';
import { artifactPath } from '../../knowledge/artifacts.js';
import type { UpstreamContext } from '../../knowledge/upstream.js';

/** Where a run's tasks work, as the run settled it before its first task. */
export type RunWorkdir =
  | { mode: 'task' }
  | {
      mode: 'worktree';
      /** The repository's top folder. */
      repo: string;
      /** The commit of --base (HEAD by default), resolved once. */
      base: string;
      /** The session's id (.csv-wave/session-id), which names its branches. */
      sessionId: string;
      keep: boolean;
    };

/** The repository and base commit of a `--workdir worktree` run. */
export interface WorktreeRepository {
  repo: string;
  base: string;
}

/**
 * Checks, before any task, that a `--workdir worktree` run can make its worktrees: the
 * session is inside a git repository with a work tree, `baseRef` (HEAD by default) names
 * a commit, and every task id can name a branch. Throws WaveError USAGE (exit 2) saying
 * what to do.
 */
export async function checkWorktreeRun(sessionDir: string, baseRef: string | undefined, ids: readonly string[]): Promise<WorktreeRepository> {
  let repo: string;
  try {
    repo = (await git(sessionDir, ['rev-parse', '--show-toplevel'])).stdout.trim();
  } catch (error) {
    const why = error instanceof GitError ? error.stderr.trim().split('\n')[0] : String(error);
    throw new WaveError(
      'USAGE',
      `--workdir worktree makes a git worktree per task, but the session ${sessionDir} is not inside a git repository with a work tree (${why}). ` +
        'Put the session inside your repository, make its folder one (git init, then commit what the tasks start from), or run with --workdir task for a plain folder per task.',
    );
  }
  if (repo === '') throw new WaveError('USAGE', `--workdir worktree: the session ${sessionDir} is inside a git folder, not a work tree`);
  const ref = baseRef ?? 'HEAD';
  let base: string;
  try {
    base = (await git(repo, ['rev-parse', '--quiet', '--verify', '--end-of-options', `${ref}^{commit}`])).stdout.trim();
  } catch {
    throw new WaveError(
      'USAGE',
      baseRef === undefined
        ? `--workdir worktree starts each task from HEAD, but the repository ${repo} has no commit yet: commit what the tasks start from, or name a commit with --base REF`
        : `--base ${baseRef} names no commit of the repository ${repo}`,
    );
  }
  const bad = ids.filter((id) => !isRefComponent(id));
  if (bad.length > 0) {
    throw new WaveError(
      'USAGE',
      `--workdir worktree names a branch csv-wave/<session id>/<task id> per task, and these task ids cannot name a git branch ` +
        `(a name may not start or end with '.', hold '..' or end with '.lock'): ${bad.slice(0, 10).join(', ')}${bad.length > 10 ? ` and ${bad.length - 10} more` : ''}`,
    );
  }
  return { repo, base };
}

/** The request's plan for one task: undefined for the session folder. */
export function workdirPlan(workdir: RunWorkdir | undefined, sessionDir: string, taskId: string): WorkdirPlan | undefined {
  if (workdir === undefined) return undefined;
  if (workdir.mode === 'task') return { mode: 'task' };
  return {
    mode: 'worktree',
    repo: workdir.repo,
    base: workdir.base,
    branch: worktreeBranch(workdir.sessionId, taskId),
    replaced: replacedBranchPrefix(workdir.sessionId, taskId),
    path: join(sessionDir, taskWorktree(taskId)),
    keep: workdir.keep,
  };
}

/**
 * The worktrees a stopped run left (killed mid-task: its attempt never put its worktree
 * away): every unlocked worktree on a branch of this session is removed, and git's records
 * of worktrees whose folder is gone are pruned, before the first task. A locked one was
 * kept by --keep-worktrees and stays (its task's next attempt replaces it). Branches stay:
 * each attempt settles its own. Says what it removed; a git that fails here is a warning.
 */
export async function sweepStaleWorktrees(repo: string, sessionId: string, warn: (message: string) => void): Promise<string[]> {
  const prefix = worktreeBranchPrefix(sessionId);
  const removed: string[] = [];
  try {
    await git(repo, ['worktree', 'prune']);
    for (const entry of await listWorktrees(repo)) {
      if (entry.main || entry.locked || entry.branch?.startsWith(prefix) !== true) continue;
      await removeWorktree(repo, entry.path, false);
      removed.push(entry.path);
    }
  } catch (error) {
    warn(`--workdir worktree: the worktrees a stopped run left could not all be removed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (removed.length > 0) warn(`--workdir worktree: removed ${removed.length} worktree(s) a stopped run left: ${removed.join(', ')}`);
  return removed;
}

/**
 * The upstream context with what each dependency changed in its worktree: the branch and
 * the patch, for a dependency whose `artifacts/<id>/changes.patch` exists.
 */
export function withChanges(upstream: UpstreamContext, workdir: RunWorkdir | undefined): UpstreamContext {
  if (workdir?.mode !== 'worktree') return upstream;
  const deps = upstream.deps.map((dep) => {
    const patch = artifactPath(dep.id, kChangesArtifact);
    return dep.artifacts.includes(patch) ? { ...dep, changes: { branch: worktreeBranch(workdir.sessionId, dep.id), patch } } : dep;
  });
  return { ...upstream, deps };
}

/** The run's workdir once its session id is known; undefined for the session folder. */
export function runWorkdir(
  mode: WorkdirMode,
  repository: WorktreeRepository | undefined,
  sessionId: (() => string) | undefined,
  keep: boolean,
): RunWorkdir | undefined {
  if (mode === 'session') return undefined;
  if (mode === 'task') return { mode: 'task' };
  if (repository === undefined || sessionId === undefined) throw new Error('runWorkdir: a worktree run needs its repository and session id');
  const id = sessionId();
  if (!isRefComponent(id)) {
    throw new WaveError('USAGE', `--workdir worktree names branches after the session id, and ${id} (.csv-wave/session-id) cannot name one: remove that file and a new id is made`);
  }
  return { mode: 'worktree', ...repository, sessionId: id, keep };
}
