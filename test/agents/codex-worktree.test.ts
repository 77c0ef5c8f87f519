import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexBinary, codexHome, removeTempDirs, tempDir } from '../helpers/agent-servers/agent-cli.js';
import { startResponsesServer, type ResponsesServer } from '../helpers/agent-servers/responses-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCliWith } from '../helpers/spawn-cli.js';

/**
 * `--executor codex --workdir worktree` through the real codex binary, against the scripted
 * Responses-API server: codex is started with `-C` the task's worktree, which it reports to
 * the model as its working folder (the request's environment context).
 */

let server: ResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  removeTempDirs();
});

describe('csv-wave run --executor codex --workdir worktree', () => {
  it("runs codex in the task's worktree (-C), on the branch csv-wave/<session id>/<id>", async () => {
    const root = tempDir('codex-worktree');
    const home = join(root, 'home');
    mkdirSync(home);
    const gitEnv = {
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    };
    const repo = join(root, 'repo');
    mkdirSync(repo);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...gitEnv }, encoding: 'utf8' });
    writeFileSync(join(repo, 'README.txt'), 'the project\n');
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'base');
    const base = git('rev-parse', 'HEAD').trim();
    const dir = buildSession([{ id: 'A', title: 'Look', description: 'Look at the project', role: 'writer' }], { dir: join(repo, 's') });

    server = await startResponsesServer([{ kind: 'text', text: JSON.stringify({ status: 'completed', findings: 'looked', key_findings: ['looked'] }) }]);
    const codexHomeDir = codexHome();
    const exited = await spawnCliWith(
      {
        env: {
          ...gitEnv,
          PATH: `${dirname(codexBinary())}:${process.env.PATH ?? ''}`,
          CODEX_HOME: codexHomeDir,
          OPENAI_API_KEY: 'sk-codex-worktree-test-0123456789',
          OPENAI_BASE_URL: undefined,
        },
      },
      'run',
      dir,
      '--executor',
      'codex',
      '--model',
      'scripted-model',
      '--base-url',
      server.baseUrl,
      '--workdir',
      'worktree',
    ).exited;
    expect(exited.code, exited.stderr).toBe(0);
    expect(readRows(dir).get('A')).toMatchObject({ status: 'completed', findings: 'looked' });

    const worktree = join(dir, 'worktrees', 'A');
    const input = JSON.stringify(server.responseBodies()[0]!.input);
    expect(input).toContain(`<cwd>${worktree}</cwd>`);
    const sessionId = readFileSync(join(dir, '.csv-wave', 'session-id'), 'utf8').split('\n', 1)[0]!;
    // A read-only codex changed nothing: its branch stays at the base, no patch; the worktree is gone.
    expect(git('rev-parse', `csv-wave/${sessionId}/A`).trim()).toBe(base);
    expect(existsSync(join(dir, 'artifacts', 'A', 'changes.patch'))).toBe(false);
    expect(existsSync(worktree)).toBe(false);
  });
});
