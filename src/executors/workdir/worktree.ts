import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from '../../files/file-lock.js';
import { taskResultSchema } from '../../schema/result.js';
import type { AttemptOutcome, TaskInput } from '../types.js';
import { git, GitError } from './git.js';
import { kChangesArtifact, kKeptReason, type WorktreePlan } from './workdir-plan.js';
import { listWorktrees, removeWorktree } from './worktree-list.js';
import type { Workplace } from './workplace.js';

/** The lock, in the repository's git folder, that csv-wave's worktree commands of one repository take in turn. */
const kLockName = 'csv-wave-worktrees.lock';

/** Who commits a task's changes on its branch: csv-wave, always, so that the branch says where it came from. */
const kAuthor = { name: 'csv-wave', email: 'csv-wave@localhost' };
const kCommitEnv = {
  GIT_AUTHOR_NAME: kAuthor.name,
  GIT_AUTHOR_EMAIL: kAuthor.email,
  GIT_COMMITTER_NAME: kAuthor.name,
  GIT_COMMITTER_EMAIL: kAuthor.email,
};
/** csv-wave's own commands run no hook of the repository's and sign nothing: what they do does not depend on it. */
const kQuiet = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false'];

/**
 * Makes the task's worktree (worktree flow of docs/workdir.md): any worktree left at its path
 * or on its branch removed, an earlier attempt's commits on the branch kept under
 * `plan.replaced/<n>` (and said in a note), then `git worktree add -B <branch> <path> <base>`.
 * Every command that changes the repository's worktrees or branches runs under one lock
 * per repository: parallel `git worktree add` fail (see git.ts).
 */
export async function openWorktree(plan: WorktreePlan, task: TaskInput): Promise<Workplace> {
  if (!existsSync(plan.repo)) {
    throw new Error(
      `the repository ${plan.repo} is not on this machine: a worker runs --workdir worktree tasks in a clone at the same path as the run's`,
    );
  }
  const { stdout } = await git(plan.repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  const lock = join(stdout.trim(), kLockName);
  const notes: string[] = [];
  await withFileLock(lock, async () => {
    for (const entry of await listWorktrees(plan.repo)) {
      if (entry.main || (entry.path !== plan.path && entry.branch !== plan.branch)) continue;
      await removeWorktree(plan.repo, entry.path, entry.locked);
    }
    // A folder git no longer knows (a worktree whose metadata was pruned): ours, by its path.
    rmSync(plan.path, { recursive: true, force: true });
    await git(plan.repo, ['worktree', 'prune']);
    const tip = await revision(plan.repo, `refs/heads/${plan.branch}`);
    if (tip !== undefined && tip !== plan.base) {
      const kept = `${plan.replaced}/${(await countRefs(plan.repo, `refs/heads/${plan.replaced}/`)) + 1}`;
      await git(plan.repo, ['update-ref', `refs/heads/${kept}`, tip]);
      notes.push(`the branch ${plan.branch} held ${tip.slice(0, 12)} from an earlier attempt of ${task.id}: kept as ${kept}, and the branch starts again from ${plan.base.slice(0, 12)}`);
    }
    await git(plan.repo, [...kQuiet, 'worktree', 'add', '--quiet', '-B', plan.branch, plan.path, plan.base]);
  });
  return { dir: plan.path, notes, finish: (outcome) => finishWorktree(plan, task, lock, outcome) };
}

/**
 * Records what the attempt changed and puts the worktree away. A result (one the engine
 * will take: it is checked here first) gets its changes, tracked, new and deleted files
 * alike (`git add -A`: ignored files are not changes), committed on the branch by csv-wave,
 * as `artifacts/<id>/changes.patch` and as its `files_modified`. An attempt that failed
 * leaves nothing: its branch goes (it held no commit) and its next attempt starts clean.
 * The worktree is removed, or with `keep` locked so that no later run removes it.
 */
async function finishWorktree(plan: WorktreePlan, task: TaskInput, lock: string, outcome: AttemptOutcome): Promise<AttemptOutcome> {
  const taken = outcome.kind === 'result' && isPlainObject(outcome.result) && taskResultSchema.safeParse(outcome.result).success;
  let finished = outcome;
  if (taken) {
    const wt = plan.path;
    await git(wt, ['add', '--all']);
    const names = (await git(wt, ['diff', '--cached', '--name-only', '-z', '--no-renames'])).stdout.split('\0').filter((name) => name !== '');
    const result: Record<string, unknown> = { ...(outcome.result as Record<string, unknown>), files_modified: names };
    if (names.length > 0) {
      const patch = (await git(wt, ['diff', '--cached', '--binary', '--no-renames', '--full-index'])).stdout;
      const message = `csv-wave: task ${task.id}\n\nCSV-Wave-Task: ${task.id}\nCSV-Wave-Attempt: ${task.attempt}\n`;
      await withFileLock(lock, () => git(wt, [...kQuiet, 'commit', '--quiet', '--no-verify', '-m', message], kCommitEnv));
      const artifacts = Array.isArray(result.artifacts) ? (result.artifacts as unknown[]) : [];
      result.artifacts = [...artifacts, { name: kChangesArtifact, content: patchHeader(plan, task, names) + patch }];
    }
    finished = { ...outcome, result };
  }
  await withFileLock(lock, async () => {
    if (plan.keep) {
      await git(plan.repo, ['worktree', 'lock', '--reason', kKeptReason, plan.path]);
      return;
    }
    await removeWorktree(plan.repo, plan.path, false);
    if (!taken && (await revision(plan.repo, `refs/heads/${plan.branch}`)) === plan.base) {
      await git(plan.repo, ['branch', '--delete', '--force', plan.branch]);
    }
  });
  return finished;
}

/**
 * The patch's first lines, which `git apply` and `git am` skip (text before the first
 * `diff --git` is commentary to them): where the change is and what it touched.
 */
function patchHeader(plan: WorktreePlan, task: TaskInput, names: readonly string[]): string {
  return (
    `csv-wave task ${task.id}, attempt ${task.attempt}: ${names.length} file(s) changed\n` +
    `branch: ${plan.branch}\n` +
    `base: ${plan.base}\n` +
    `apply with: git apply <this file> (on ${plan.base.slice(0, 12)} or a tree like it)\n\n`
  );
}

/** The commit a ref names, or undefined when there is none. */
async function revision(repo: string, ref: string): Promise<string | undefined> {
  try {
    return (await git(repo, ['rev-parse', '--quiet', '--verify', `${ref}^{commit}`])).stdout.trim() || undefined;
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return undefined;
    throw error;
  }
}

async function countRefs(repo: string, prefix: string): Promise<number> {
  const { stdout } = await git(repo, ['for-each-ref', '--format=%(refname)', prefix]);
  return stdout.split('\n').filter((line) => line !== '').length;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
