import { git } from './git.js';

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  /** The branch checked out, without `refs/heads/`; undefined when detached. */
  branch?: string;
  locked: boolean;
  /** The first entry: the main worktree, never removed. */
  main: boolean;
}

/** The repository's worktrees, the main one first. */
export async function listWorktrees(repo: string): Promise<WorktreeEntry[]> {
  const { stdout } = await git(repo, ['worktree', 'list', '--porcelain']);
  const entries: WorktreeEntry[] = [];
  for (const block of stdout.split('\n\n')) {
    let entry: WorktreeEntry | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('worktree ')) entry = { path: line.slice('worktree '.length), locked: false, main: entries.length === 0 };
      else if (entry && line.startsWith('branch refs/heads/')) entry.branch = line.slice('branch refs/heads/'.length);
      else if (entry && (line === 'locked' || line.startsWith('locked '))) entry.locked = true;
    }
    if (entry) entries.push(entry);
  }
  return entries;
}

/** Removes a worktree, locked or not, with whatever it holds (its branch stays). */
export async function removeWorktree(repo: string, path: string, locked: boolean): Promise<void> {
  if (locked) await git(repo, ['worktree', 'unlock', path]).catch(() => undefined);
  await git(repo, ['worktree', 'remove', '--force', '--force', path]);
}
