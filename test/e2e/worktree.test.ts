import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCliWith, waitFor } from '../helpers/spawn-cli.js';

/**
 * `--workdir worktree` and `--workdir task` end to end: the built CLI runs shell commands
 * that edit, add and delete files of a temporary git repository, each task in its own git
 * worktree (or folder), and the tests read what git and the session hold afterwards. Git
 * runs with a private HOME and no system config, so no setting of this machine's counts.
 */

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Repo {
  root: string;
  /** The git repository, with one commit: keep.txt, edit.txt, gone.txt. */
  repo: string;
  /** The session folder, inside the repository. */
  session: string;
  env: Record<string, string>;
  base: string;
}

function gitEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
  };
}

function git(repo: Repo | string, ...args: string[]): string {
  const cwd = typeof repo === 'string' ? repo : repo.repo;
  const env = typeof repo === 'string' ? process.env : { ...process.env, ...repo.env };
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A repository with one commit and a session folder `s` in it holding `rows` (id, deps). */
function makeRepo(rows: { id: string; deps?: string }[], options: { git?: boolean } = {}): Repo {
  const root = mkdtempSync(join(tmpdir(), 'csv-wave-worktree-'));
  made.push(root);
  const home = join(root, 'home');
  mkdirSync(home);
  const env = gitEnv(home);
  const repo = join(root, 'repo');
  mkdirSync(repo);
  writeFileSync(join(repo, 'keep.txt'), 'keep\n');
  writeFileSync(join(repo, 'edit.txt'), 'line 1\n');
  writeFileSync(join(repo, 'gone.txt'), 'to be deleted\n');
  const r: Repo = { root, repo, session: join(repo, 's'), env, base: '' };
  if (options.git !== false) {
    git(r, 'init', '-q');
    git(r, 'add', '.');
    git(r, 'commit', '-q', '-m', 'base');
    r.base = git(r, 'rev-parse', 'HEAD').trim();
  }
  mkdirSync(r.session);
  const lines = ['id,title,description,role,deps', ...rows.map((row) => `${row.id},${row.id},do ${row.id},worker,${row.deps ?? ''}`)];
  writeFileSync(join(r.session, 'tasks.csv'), `${lines.join('\n')}\n`);
  return r;
}

async function csvWave(r: Repo, ...argv: string[]) {
  return spawnCliWith({ env: r.env }, ...argv).exited;
}

function sessionId(r: Repo): string {
  return readFileSync(join(r.session, '.csv-wave', 'session-id'), 'utf8').split('\n', 1)[0]!;
}

function discovery(r: Repo, id: string): { data: { files_modified: string[] }; artifacts_produced: string[] } {
  return JSON.parse(readFileSync(join(r.session, 'discoveries', `${id}.json`), 'utf8'));
}

function rows(r: Repo): Record<string, string>[] {
  // The engine writes every field quoted, without commas or new lines in these tests' cells.
  const [header, ...lines] = readFileSync(join(r.session, 'tasks.csv'), 'utf8').trim().split('\n');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split('","').map((cell, i) => [names[i]!.replace(/"/g, ''), cell.replace(/^"|"$/g, '')])));
}

function worktreeList(r: Repo): string {
  return git(r, 'worktree', 'list', '--porcelain');
}

/** A command that edits edit.txt, adds added-<id>.txt and deletes gone.txt, then prints its folder. */
const kEdit = 'echo "by $CSV_WAVE_TASK_ID" >> edit.txt && echo new > "added-$CSV_WAVE_TASK_ID.txt" && rm gone.txt && pwd';

describe('--workdir worktree', () => {
  it("runs a task in a worktree of its own: its changes are a patch that applies on the base, its files_modified, and a commit on csv-wave/<session id>/<id>; the worktree is removed", async () => {
    const r = makeRepo([{ id: 'A' }]);
    const ran = await csvWave(r, 'run', r.session, '--cmd', kEdit, '--workdir', 'worktree');
    expect(ran.code, ran.stderr).toBe(0);
    const worktree = join(r.session, 'worktrees', 'A');
    expect(rows(r)[0]).toMatchObject({ status: 'completed', findings: worktree });

    const patch = join(r.session, 'artifacts', 'A', 'changes.patch');
    // The main worktree is still at the base: the patch applies there.
    git(r, 'apply', '--check', patch);
    expect(discovery(r, 'A').data.files_modified).toEqual(['added-A.txt', 'edit.txt', 'gone.txt']);
    expect(discovery(r, 'A').artifacts_produced).toEqual(['artifacts/A/changes.patch']);

    const branch = `csv-wave/${sessionId(r)}/A`;
    expect(git(r, 'rev-parse', `${branch}^`).trim()).toBe(r.base);
    expect(git(r, 'log', '-1', '--format=%an <%ae>', branch).trim()).toBe('csv-wave <csv-wave@localhost>');
    expect(git(r, 'diff', '--name-status', r.base, branch).trim().split('\n')).toEqual(['A\tadded-A.txt', 'M\tedit.txt', 'D\tgone.txt']);
    expect(git(r, 'show', `${branch}:edit.txt`)).toBe('line 1\nby A\n');

    expect(existsSync(worktree)).toBe(false);
    expect(worktreeList(r)).not.toContain('csv-wave/');
    // The repository's own files were not touched.
    expect(git(r, 'status', '--porcelain', '--untracked-files=no')).toBe('');
  });

  it('keeps the worktree, locked, with --keep-worktrees', async () => {
    const r = makeRepo([{ id: 'A' }]);
    const ran = await csvWave(r, 'run', r.session, '--cmd', kEdit, '--workdir', 'worktree', '--keep-worktrees');
    expect(ran.code, ran.stderr).toBe(0);
    const worktree = join(r.session, 'worktrees', 'A');
    expect(readFileSync(join(worktree, 'added-A.txt'), 'utf8')).toBe('new\n');
    const list = worktreeList(r);
    expect(list).toContain(`worktree ${worktree}\n`);
    expect(list).toContain(`branch refs/heads/csv-wave/${sessionId(r)}/A\nlocked csv-wave: kept by --keep-worktrees`);
  });

  it('runs two tasks at once, each in its own worktree on its own branch', async () => {
    const r = makeRepo([{ id: 'A' }, { id: 'B' }]);
    // Each waits (bounded) until the other has started: both run at once, not one after the other.
    const barrier =
      'touch "$CSV_WAVE_SESSION/started-$CSV_WAVE_TASK_ID"; i=0; ' +
      'until [ -e "$CSV_WAVE_SESSION/started-A" ] && [ -e "$CSV_WAVE_SESSION/started-B" ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 1; sleep 0.02; done; ';
    const ran = await csvWave(r, 'run', r.session, '--cmd', barrier + kEdit, '--workdir', 'worktree', '--concurrency', '2');
    expect(ran.code, ran.stderr).toBe(0);
    const found = rows(r).map((row) => row.findings);
    expect(found).toEqual([join(r.session, 'worktrees', 'A'), join(r.session, 'worktrees', 'B')]);
    const sid = sessionId(r);
    for (const [id, other] of [['A', 'B'], ['B', 'A']] as const) {
      const names = git(r, 'diff', '--name-only', r.base, `csv-wave/${sid}/${id}`).trim().split('\n');
      expect(names).toEqual([`added-${id}.txt`, 'edit.txt', 'gone.txt']);
      expect(names).not.toContain(`added-${other}.txt`);
      git(r, 'apply', '--check', join(r.session, 'artifacts', id, 'changes.patch'));
    }
    expect(worktreeList(r)).not.toContain('csv-wave/');
  });

  it('gives a retried task a clean worktree: what a transient first attempt wrote is gone', async () => {
    const r = makeRepo([{ id: 'A' }]);
    const cmd =
      'if [ "$CSV_WAVE_ATTEMPT" = 1 ]; then echo junk > junk.txt; echo "more" >> edit.txt; exit 75; fi; ' +
      '[ -e junk.txt ] && { echo "junk.txt left over" >&2; exit 1; }; grep -q more edit.txt && { echo "edit.txt left over" >&2; exit 1; }; ' +
      'echo ok > ok.txt; echo attempt $CSV_WAVE_ATTEMPT';
    const ran = await csvWave(r, 'run', r.session, '--cmd', cmd, '--workdir', 'worktree', '--retries', '1', '--retry-delay', '0');
    expect(ran.code, ran.stderr).toBe(0);
    expect(rows(r)[0]).toMatchObject({ status: 'completed', findings: 'attempt 2' });
    expect(discovery(r, 'A').data.files_modified).toEqual(['ok.txt']);
    expect(git(r, 'diff', '--name-only', r.base, `csv-wave/${sessionId(r)}/A`).trim()).toBe('ok.txt');
  });

  it("shows a downstream task its dependency's patch and branch in its upstream context", async () => {
    const r = makeRepo([{ id: 'A' }, { id: 'C', deps: 'A' }]);
    const cmd = `if [ "$CSV_WAVE_TASK_ID" = C ]; then cat > "$CSV_WAVE_SESSION/c-input.json"; echo read; else ${kEdit}; fi`;
    const ran = await csvWave(r, 'run', r.session, '--cmd', cmd, '--workdir', 'worktree');
    expect(ran.code, ran.stderr).toBe(0);
    const input = JSON.parse(readFileSync(join(r.session, 'c-input.json'), 'utf8'));
    expect(input.upstream.deps[0]).toMatchObject({
      id: 'A',
      status: 'completed',
      artifacts: ['artifacts/A/changes.patch'],
      changes: { branch: `csv-wave/${sessionId(r)}/A`, patch: 'artifacts/A/changes.patch' },
    });
    expect(input.upstream.deps[0].discovery.data.files_modified).toEqual(['added-A.txt', 'edit.txt', 'gone.txt']);
  });

  it('keeps the branch of a completed task that a rerun replaces, and says so', async () => {
    const r = makeRepo([{ id: 'A' }]);
    expect((await csvWave(r, 'run', r.session, '--cmd', kEdit, '--workdir', 'worktree')).code).toBe(0);
    const sid = sessionId(r);
    const first = git(r, 'rev-parse', `csv-wave/${sid}/A`).trim();
    const again = await csvWave(r, 'rerun', r.session, '--task', 'A', '--cmd', 'echo second > second.txt; echo two', '--workdir', 'worktree');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`kept as csv-wave-replaced/${sid}/A/1`);
    expect(git(r, 'rev-parse', `csv-wave-replaced/${sid}/A/1`).trim()).toBe(first);
    expect(git(r, 'diff', '--name-only', r.base, `csv-wave/${sid}/A`).trim()).toBe('second.txt');
  });

  it('refuses a session outside a git repository with exit 2, before any task', async () => {
    const r = makeRepo([{ id: 'A' }], { git: false });
    const ran = await csvWave(r, 'run', r.session, '--cmd', 'touch "$CSV_WAVE_SESSION/ran"', '--workdir', 'worktree');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('is not inside a git repository');
    expect(ran.stderr).toContain('--workdir task');
    expect(existsSync(join(r.session, 'ran'))).toBe(false);
    expect(rows(r)[0]!.status ?? '').not.toBe('completed');
  });

  it('refuses a --base that names no commit with exit 2', async () => {
    const r = makeRepo([{ id: 'A' }]);
    const ran = await csvWave(r, 'run', r.session, '--cmd', 'true', '--workdir', 'worktree', '--base', 'no-such-branch');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('--base no-such-branch names no commit');
  });

  it('starts from --base when given', async () => {
    const r = makeRepo([{ id: 'A' }]);
    git(r, 'tag', 'start');
    writeFileSync(join(r.repo, 'later.txt'), 'later\n');
    git(r, 'add', 'later.txt');
    git(r, 'commit', '-q', '-m', 'later');
    const ran = await csvWave(r, 'run', r.session, '--cmd', '[ -e later.txt ] && exit 1; echo x > x.txt', '--workdir', 'worktree', '--base', 'start');
    expect(ran.code, ran.stderr).toBe(0);
    expect(git(r, 'rev-parse', `csv-wave/${sessionId(r)}/A^`).trim()).toBe(r.base);
  });

  it('removes the worktree a killed run left before the resumed run starts a task', async () => {
    const r = makeRepo([{ id: 'A' }]);
    const marker = join(r.root, 'running');
    // The first run's command writes junk, says it runs (with its process group), then waits to be killed.
    const cmd =
      `if [ -e "${marker}" ]; then ${kEdit}; else echo junk > junk.txt; echo $$ > "${marker}.tmp"; mv "${marker}.tmp" "${marker}"; ` +
      'while :; do sleep 1; done; fi';
    const first = spawnCliWith({ env: r.env }, 'run', r.session, '--cmd', cmd, '--workdir', 'worktree');
    await waitFor(() => existsSync(marker), 'the first attempt to start');
    const worktree = join(r.session, 'worktrees', 'A');
    expect(existsSync(join(worktree, 'junk.txt'))).toBe(true);
    // kill -9 of the run, its launcher and the command's group: nothing puts the worktree away.
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(first.child.pid)], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
    first.child.kill('SIGKILL');
    for (const pid of children) process.kill(Number(pid), 'SIGKILL');
    process.kill(-Number(readFileSync(marker, 'utf8').trim()), 'SIGKILL');
    await first.exited;
    expect(worktreeList(r)).toContain(`worktree ${worktree}\n`);

    const resumed = await csvWave(r, 'resume', r.session, '--cmd', cmd, '--workdir', 'worktree');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`removed 1 worktree(s) a stopped run left: ${worktree}`);
    expect(discovery(r, 'A').data.files_modified).toEqual(['added-A.txt', 'edit.txt', 'gone.txt']);
    expect(worktreeList(r)).not.toContain('csv-wave/');
  });
});

describe('--workdir task', () => {
  it('gives each task a folder of its own, workdirs/<id>, emptied for a retry', async () => {
    const r = makeRepo([{ id: 'A' }, { id: 'B' }], { git: false });
    const cmd =
      'if [ "$CSV_WAVE_TASK_ID" = A ] && [ "$CSV_WAVE_ATTEMPT" = 1 ]; then echo junk > junk.txt; exit 75; fi; ' +
      '[ -e junk.txt ] && exit 1; echo "$CSV_WAVE_TASK_ID" > mine.txt; pwd';
    const ran = await csvWave(r, 'run', r.session, '--cmd', cmd, '--workdir', 'task', '--retries', '1', '--retry-delay', '0');
    expect(ran.code, ran.stderr).toBe(0);
    expect(rows(r).map((row) => row.findings)).toEqual([join(r.session, 'workdirs', 'A'), join(r.session, 'workdirs', 'B')]);
    expect(readFileSync(join(r.session, 'workdirs', 'A', 'mine.txt'), 'utf8')).toBe('A\n');
    expect(readFileSync(join(r.session, 'workdirs', 'B', 'mine.txt'), 'utf8')).toBe('B\n');
    expect(existsSync(join(r.session, 'workdirs', 'A', 'junk.txt'))).toBe(false);
  });

  it('refuses a module executor with exit 2', async () => {
    const r = makeRepo([{ id: 'A' }], { git: false });
    writeFileSync(join(r.session, 'task.mjs'), 'export default async () => ({ findings: "x" });\n');
    const ran = await csvWave(r, 'run', r.session, '--module', join(r.session, 'task.mjs'), '--workdir', 'task');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('--workdir');
  });
});
