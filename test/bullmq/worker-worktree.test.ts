import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readyWorkerWith, redisForEachTest } from '../helpers/bullmq-session.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith } from '../helpers/spawn-cli.js';

/**
 * `--workdir worktree` through a `csv-wave worker`: the worker makes the task's worktree in
 * the repository at the run's path (here the same machine), and its patch comes back in the
 * reply, written into the session by the coordinator.
 */
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe.runIf(kRunRedisTests)('csv-wave worker: --workdir worktree', () => {
  const each = redisForEachTest();

  it("makes the task's worktree on the worker, and sends its changes back as changes.patch", { timeout: 300_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'csv-wave-worker-worktree-'));
    roots.push(root);
    const home = join(root, 'home');
    mkdirSync(home);
    const env = {
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    };
    const repo = join(root, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...env }, encoding: 'utf8' });
    writeFileSync(join(repo, 'edit.txt'), 'line 1\n');
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    const base = git('rev-parse', 'HEAD').trim();
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { dir: join(repo, 's'), sessionId: 'worktree-job' });

    const worker = await readyWorkerWith({ env }, each.redis.url, '--session-id', 'worktree-job');
    each.started.push(worker);
    const command = 'echo more >> edit.txt && echo new > added.txt && echo "$CSV_WAVE_WORKDIR"';
    const ran = await spawnCliWith({ env }, 'run', dir, '--cmd', command, '--workdir', 'worktree', '--backend', 'bullmq', '--redis', each.redis.url).exited;
    expect(ran.code, ran.stderr).toBe(0);
    const worktree = join(dir, 'worktrees', 'A');
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: worktree });
    const patch = join(dir, 'artifacts', 'A', 'changes.patch');
    expect(readFileSync(patch, 'utf8')).toContain('+new');
    execFileSync('git', ['apply', '--check', patch], { cwd: repo, env: { ...process.env, ...env } });
    expect(git('diff', '--name-only', base, 'csv-wave/worktree-job/A').trim().split('\n')).toEqual(['added.txt', 'edit.txt']);
    expect(existsSync(worktree)).toBe(false);
  });
});
