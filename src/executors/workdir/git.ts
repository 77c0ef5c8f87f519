import { execFile } from 'node:child_process';

/** What a git command printed, when it succeeded. */
export interface GitOutput {
  stdout: string;
  stderr: string;
}

/** A git command that failed: its arguments and what it said. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`git ${args.join(' ')} failed: ${stderr.trim() || `exit code ${String(exitCode)}`}`);
  }
}

/**
 * Variables that point git at another repository, index or work tree than the folder it
 * runs in: set when csv-wave itself runs from a git hook, and wrong for every worktree.
 */
const kRepositoryVariables = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_NAMESPACE'];

/**
 * What git says when another git process holds what it needs: a lock file (`index.lock`,
 * `config.lock`, a ref's lock) or a worktree another `git worktree add` is half-way
 * through making (`failed to read .git/worktrees/<name>/commondir`: on git 2.39, 11 of 120
 * `git worktree add` run 8 at a time failed so, and 4 of 16 run at once). csv-wave
 * serializes its own git commands per repository (worktree.ts); this covers a person's.
 */
const kContended = /\.lock'?: File exists|could not lock|Unable to create .*\.lock|unable to lock|failed to read .*commondir/i;
const kRetries = 5;

/** The largest output read from one git command (a patch): past it the command fails. */
export const kMaxGitOutputBytes = 256 * 1024 * 1024;

/**
 * Runs `git <args>` in `cwd` without a shell, in the C locale, with no prompt for a
 * password, never pointed elsewhere by the environment; retried a few times when another
 * git process held a lock. Rejects with GitError.
 */
export async function git(cwd: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<GitOutput> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await gitOnce(cwd, args, env);
    } catch (error) {
      if (!(error instanceof GitError) || attempt >= kRetries || !kContended.test(error.stderr)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt * (0.5 + Math.random())));
    }
  }
}

function gitOnce(cwd: string, args: readonly string[], extra: Readonly<Record<string, string>>): Promise<GitOutput> {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', ...extra };
  for (const name of kRepositoryVariables) delete env[name];
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd, env, maxBuffer: kMaxGitOutputBytes, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && stderr === '') reject(new GitError(args, `cannot run git (${error.message}): install git or put it on PATH`, null));
        else reject(new GitError(args, stderr || error.message, typeof code === 'number' ? code : null));
        return;
      }
      resolve({ stdout, stderr });
    });
  });
}

/** True when `name` can be one component of a branch name (git check-ref-format), for names of [A-Za-z0-9._-]. */
export function isRefComponent(name: string): boolean {
  return name !== '' && !name.startsWith('.') && !name.endsWith('.') && !name.endsWith('.lock') && !name.includes('..');
}
