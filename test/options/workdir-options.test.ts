import { describe, expect, test } from 'vitest';
import { normalizeRunOptions } from '../../src/options/options.js';
import { sessionConfigSchema, type SessionConfig } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

const kCommand = { type: 'command', cmd: 'echo {id}' } as const;
const kDir = '/sessions/s1';

function session(fields: Record<string, unknown>): { config: SessionConfig; dir: string } {
  return { config: sessionConfigSchema.parse(fields) as SessionConfig, dir: kDir };
}

describe('--workdir, --base, --keep-worktrees', () => {
  test('default to the session folder, no base and no kept worktrees', () => {
    const settings = normalizeRunOptions({ executor: kCommand });
    expect(settings.workdir).toBe('session');
    expect(settings.keepWorktrees).toBe(false);
    expect(settings.base).toBeUndefined();
  });

  test("session.json's workdir, base and keep_worktrees, under the options'", () => {
    const file = session({ workdir: 'worktree', base: 'main', keep_worktrees: true });
    expect(normalizeRunOptions({ executor: kCommand }, file)).toMatchObject({ workdir: 'worktree', base: 'main', keepWorktrees: true });
    expect(normalizeRunOptions({ executor: kCommand, workdir: 'worktree', base: 'v1', keepWorktrees: false }, file)).toMatchObject({
      workdir: 'worktree',
      base: 'v1',
      keepWorktrees: false,
    });
    expect(normalizeRunOptions({ executor: kCommand, workdir: 'task' })).toMatchObject({ workdir: 'task' });
  });

  test('an unknown mode is refused, named as the library names it', () => {
    expectWaveError(() => normalizeRunOptions({ executor: kCommand, workdir: 'tmp' as 'task' }), {
      code: 'USAGE',
      message: 'Expected `workdir` to be `session`, `task` or `worktree`, got `tmp` (string)',
    });
    expect(() => sessionConfigSchema.parse({ workdir: 'tmp' })).toThrow();
  });

  test('a folder of its own is for commands and agents, not modules or model calls', () => {
    expectWaveError(() => normalizeRunOptions({ executor: { type: 'module', path: '/m.mjs' }, workdir: 'task' }), {
      code: 'USAGE',
      message: '`workdir` task (--workdir) gives each task a folder to work in: it goes with --cmd, --executor codex or --executor claude, not a module executor',
    });
    expectWaveError(() => normalizeRunOptions({ executor: { type: 'openai', model: 'm' }, workdir: 'worktree' }), { code: 'USAGE' });
    expect(normalizeRunOptions({ executor: { type: 'codex', model: 'm' }, workdir: 'worktree' }).workdir).toBe('worktree');
  });

  test('--base and --keep-worktrees go with --workdir worktree', () => {
    expectWaveError(() => normalizeRunOptions({ executor: kCommand, base: 'main' }), {
      code: 'USAGE',
      message: "`base` (--base) is the commit of the tasks' worktrees: add --workdir worktree",
    });
    expectWaveError(() => normalizeRunOptions({ executor: kCommand, workdir: 'task', keepWorktrees: true }), {
      code: 'USAGE',
      message: "`keepWorktrees` (--keep-worktrees) keeps the tasks' worktrees: add --workdir worktree",
    });
  });
});
