import { describe, expect, it } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import type { WaveError } from '../../src/errors.js';
import type { ExecutorSpec } from '../../src/executors/messages.js';
import { checkAgentSettings } from '../../src/options/agent-settings-check.js';
import type { PipelineName } from '../../src/schema/session.js';
import { expectWaveError } from '../helpers/wave-error.js';

/** A row at file line `line` with `role` and the extra cells. */
function row(line: number, role: string, extra: Record<string, string> = {}): TaskRow {
  return { ...emptyRow(), id: `T${line}`, description: 'd', role, line, extra };
}

/** session.json's text with `roles`, one key a line, as a person writes it. */
function sessionFile(roles: Record<string, unknown>, executor: Record<string, unknown> = { type: 'codex', model: 'run-model' }) {
  return { shown: 'session.json', text: JSON.stringify({ pipeline: 'generic', executor, roles }, null, 2) };
}

const codex: ExecutorSpec = { type: 'codex', model: 'run-model' };

function check(spec: ExecutorSpec, rows: TaskRow[], session?: { shown: string; text: string }, pipeline: PipelineName = 'generic') {
  return checkAgentSettings(spec, rows, { tasks: 'tasks.csv', ...(session === undefined ? {} : { session }) }, pipeline);
}

/** The `file:line: message` lines the CLI prints for a refused check. */
function printed(error: WaveError): string[] {
  const lines = error.violations.length > 0 ? error.violations.map((v) => `${error.path}:${v.line}: ${v.message}`) : error.message.split('\n');
  return lines;
}

describe('checkAgentSettings', () => {
  it('returns the agents the tasks use: the run\'s, its roles\', its rows\'', () => {
    expect(check(codex, [row(2, 'w')])).toEqual(['codex']);
    const spec: ExecutorSpec = { ...codex, roles: { rev: { agent: 'claude', model: 'c' } } };
    expect(check(spec, [row(2, 'w'), row(3, 'rev')]).sort()).toEqual(['claude', 'codex']);
    expect(check(codex, [row(2, 'w', { agent: 'claude', model: 'c' }), row(3, 'w', { agent: 'codex' })]).sort()).toEqual(['claude', 'codex']);
    expect(check(codex, [row(2, 'w', { agent: '', model: 'other', effort: 'high' })])).toEqual(['codex']);
  });

  it('refuses an agent cell that is not codex or claude, at its line', () => {
    const error = expectWaveError(() => check(codex, [row(2, 'w'), row(3, 'w', { agent: 'gpt' }), row(5, 'w', { agent: 'Claude' })]), { code: 'INVALID_TASKS' });
    expect(printed(error)).toEqual([
      'tasks.csv:3: Invalid agent: gpt (codex or claude: the agent CLI that runs the row)',
      'tasks.csv:5: Invalid agent: Claude (codex or claude: the agent CLI that runs the row)',
    ]);
  });

  it('refuses an agent cell under an executor that is no agent, saying what to do; model and effort cells stay columns of its own', () => {
    const command: ExecutorSpec = { type: 'command', template: 'echo {model}' };
    expect(check(command, [row(2, 'w', { model: 'm', effort: 'e', agent: ' ' })])).toEqual([]);
    const error = expectWaveError(() => check(command, [row(2, 'w'), row(4, 'w', { agent: 'codex' })]), { code: 'INVALID_TASKS' });
    expect(printed(error)).toEqual([
      "tasks.csv:4: agent codex: the agent column chooses the agent CLI of a row, and this run's executor is command; run it with --executor codex --model NAME (or an agent executor in session.json), or empty the agent column",
    ]);
  });

  it('refuses a row that switches agent without a model for it (the run\'s model is the other CLI\'s)', () => {
    const error = expectWaveError(() => check(codex, [row(2, 'w', { agent: 'claude' })]), { code: 'INVALID_TASKS' });
    expect(printed(error)[0]).toBe(
      'tasks.csv:2: agent claude: this row needs a model for claude (a model cell, or "model" in roles.w of session.json): the run\'s model, run-model, is codex\'s',
    );
    // A model cell, or the role's model, is enough.
    expect(check({ ...codex, roles: { w: { model: 'c' } } }, [row(2, 'w', { agent: 'claude' })]).sort()).toEqual(['claude', 'codex']);
  });

  it("refuses a role entry no task has, at its line in session.json, with the role it most likely meant; a role the pipeline adds later is fine", () => {
    const roles = { writer: { model: 'a' }, writre: { model: 'b' }, zzz: { effort: 'high' } };
    const file = sessionFile(roles);
    const error = expectWaveError(() => check({ ...codex, roles }, [row(2, 'writer')], file), { code: 'INVALID_SESSION' });
    const lineOf = (key: string) => file.text.split('\n').findIndex((line) => line.includes(`"${key}":`)) + 1;
    expect(printed(error)).toEqual([
      `session.json:${lineOf('writre')}: roles.writre: no task has the role writre (did you mean writer?)`,
      `session.json:${lineOf('zzz')}: roles.zzz: no task has the role zzz (the tasks' roles: writer)`,
    ]);
    // brainstorm adds challenger and revision rows as it runs: their roles may have entries before.
    expect(check({ ...codex, roles: { challenger: { model: 'x' } } }, [row(2, 'ideator')], undefined, 'brainstorm')).toEqual(['codex']);
  });

  it("refuses a role that switches agent without its own model, at the line of its agent", () => {
    const roles = { rev: { agent: 'claude' as const, effort: 'high' } };
    const file = sessionFile(roles);
    const error = expectWaveError(() => check({ ...codex, roles }, [row(2, 'rev')], file), { code: 'INVALID_SESSION' });
    const line = file.text.split('\n').findIndex((text) => text.includes('"agent": "claude"')) + 1;
    expect(printed(error)).toEqual([`session.json:${line}: roles.rev: agent claude needs its own "model" here: the run's model, run-model, is codex's`]);
  });

  it("refuses codex args that repeat csv-wave's own flags, in the executor block and in a role's entry, at their lines", () => {
    const roles = { w: { args: ['-s', 'danger-full-access'] } };
    const file = sessionFile(roles, { type: 'codex', model: 'run-model', args: ['--ephemeral'] });
    const error = expectWaveError(() => check({ ...codex, args: ['--ephemeral'], roles }, [row(2, 'w')], file), { code: 'INVALID_SESSION' });
    expect(printed(error)).toEqual([
      expect.stringMatching(/^session\.json:\d+: executor\.args: `--ephemeral` is a flag csv-wave passes to codex itself; codex refuses it twice$/),
      expect.stringMatching(/^session\.json:\d+: roles\.w\.args: `-s` is a flag csv-wave passes to codex itself \(set "sandbox" instead\)/),
    ]);
    const [first, second] = error.violations;
    expect(first!.line).toBeLessThan(second!.line);
  });

  it("reports session.json's and tasks.csv's problems together, each at its file's line", () => {
    const roles = { nobody: { model: 'x' } };
    const error = expectWaveError(() => check({ ...codex, roles }, [row(3, 'w', { agent: 'gpt' })], sessionFile(roles)), { code: 'INVALID_TASKS' });
    expect(printed(error)).toEqual([expect.stringMatching(/^session\.json:\d+: roles\.nobody: no task has the role nobody/), expect.stringMatching(/^tasks\.csv:3: Invalid agent: gpt/)]);
  });
});
