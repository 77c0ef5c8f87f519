import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { FinishedReply, WorkerReply, WorkerRequest } from '../../src/executors/messages.js';
import { reuseExplorations } from '../../src/pipelines/analyze/explorer-cache.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

function request(id: string, row: Record<string, string>, session: string): WorkerRequest {
  return {
    executor: { type: 'command', template: 'true' },
    task: { id, wave: 1, attempt: 1, session, row: { id, ...row }, prev_context: '' },
    deps: [],
    timeoutMs: 0,
  };
}

const done = (findings: string): FinishedReply => ({
  kind: 'finished',
  status: 'completed',
  findings,
  gc_signal: '',
  severity_summary: '',
  error: '',
  discoveries: [],
  wisdom: {},
  artifacts: [],
  supervision_verdict: undefined,
  supervision_score: undefined,
});

/** The hook over a fresh session, with a fake run that records what it ran and a finish that marks its replies. */
function setup(reply: (request: WorkerRequest) => Promise<WorkerReply> = async (r) => done(`explored by ${r.task.id}`)) {
  const session = mkdtempSync(join(tmpdir(), 'csv-wave-explorer-hook-'));
  const ran: string[] = [];
  const warnings: string[] = [];
  const finished: { id: string; result: Record<string, unknown> }[] = [];
  const around = reuseExplorations({
    files: new SessionWriter(session),
    warn: (message) => warnings.push(message),
    finish: (req, result) => {
      finished.push({ id: req.task.id, result });
      return done(`finished ${String(result['findings'])}`);
    },
  });
  const run = (req: WorkerRequest) => {
    ran.push(req.task.id);
    return reply(req);
  };
  return { session, ran, warnings, finished, attempt: (req: WorkerRequest) => around(req, run) };
}

describe('the explorer cache hook', () => {
  test('a task of another role, or an explorer without an angle, runs as it is and is not cached', async () => {
    const hook = setup();
    const analyst = request('A1', { role: 'analyst', angle: 'costs' }, hook.session);
    expect(await hook.attempt(analyst)).toEqual(done('explored by A1'));
    expect(await hook.attempt(request('E0', { role: 'explorer', angle: ' ' }, hook.session))).toEqual(done('explored by E0'));
    expect(await hook.attempt(request('A2', { role: 'analyst', angle: 'costs' }, hook.session))).toEqual(done('explored by A2'));
    expect(hook.ran).toEqual(['A1', 'E0', 'A2']);
    expect(existsSync(join(hook.session, 'explorations'))).toBe(false);
  });

  test('a second explorer of the same angle (spelt another way) reuses the first result instead of running', async () => {
    const hook = setup();
    expect(await hook.attempt(request('E1', { role: 'explorer', angle: 'Cost Model' }, hook.session))).toEqual(done('explored by E1'));
    expect(await hook.attempt(request('E2', { role: 'explorer', angle: 'cost_model' }, hook.session))).toEqual(done('finished explored by E1'));
    expect(hook.ran).toEqual(['E1']);
    expect(hook.finished).toEqual([{ id: 'E2', result: { findings: 'explored by E1' } }]);
    expect(hook.warnings).toEqual(['E2 reused the exploration of E1 (angle cost_model)']);
    const index = JSON.parse(readFileSync(join(hook.session, 'explorations', 'cache-index.json'), 'utf8')) as { entries: unknown[] };
    expect(index.entries).toEqual([expect.objectContaining({ angle: 'cost-model', created_by: 'E1' })]);
  });

  test('another angle explores anew; the explorer that made an entry explores anew when it runs again', async () => {
    const hook = setup();
    await hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    await hook.attempt(request('E2', { role: 'explorer', angle: 'risks' }, hook.session));
    await hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    expect(hook.ran).toEqual(['E1', 'E2', 'E1']);
    expect(hook.finished).toEqual([]);
  });

  test('a failed or errored exploration is not cached: the next explorer of the angle runs', async () => {
    const replies: WorkerReply[] = [
      { ...done(''), status: 'failed', error: 'no' },
      { kind: 'error', errorClass: 'timeout', error: 'slow' },
      done('third time'),
    ];
    const hook = setup(async () => replies.shift()!);
    await hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    await hook.attempt(request('E2', { role: 'explorer', angle: 'costs' }, hook.session));
    await hook.attempt(request('E3', { role: 'explorer', angle: 'costs' }, hook.session));
    expect(await hook.attempt(request('E4', { role: 'explorer', angle: 'costs' }, hook.session))).toEqual(done('finished third time'));
    expect(hook.ran).toEqual(['E1', 'E2', 'E3']);
  });

  test('an explorer that starts while the first of its angle runs waits for it, then reuses it', async () => {
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    const hook = setup(async (r) => {
      await first;
      return done(`explored by ${r.task.id}`);
    });
    const one = hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    const two = hook.attempt(request('E2', { role: 'explorer', angle: 'Costs' }, hook.session));
    // A third explorer of another angle is not held up by them.
    const other = hook.attempt(request('E3', { role: 'explorer', angle: 'risks' }, hook.session));
    expect(hook.ran).toEqual(['E1', 'E3']);
    release();
    expect(await two).toEqual(done('finished explored by E1'));
    expect(await one).toEqual(done('explored by E1'));
    expect(await other).toEqual(done('explored by E3'));
    expect(hook.ran).toEqual(['E1', 'E3']);
  });

  test('…and runs itself when the first one threw', async () => {
    let calls = 0;
    const hook = setup(async (r) => {
      calls++;
      if (calls === 1) throw new Error('pool closed');
      return done(`explored by ${r.task.id}`);
    });
    const one = hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    const two = hook.attempt(request('E2', { role: 'explorer', angle: 'costs' }, hook.session));
    await expect(one).rejects.toThrow('pool closed');
    expect(await two).toEqual(done('explored by E2'));
    expect(hook.ran).toEqual(['E1', 'E2']);
  });

  test('a cache the session folder cannot take is an io error, not a task failure', async () => {
    const hook = setup();
    // A file named like the folder stands in the way (ENOTDIR), which holds as root too.
    writeFileSync(join(hook.session, 'explorations'), 'in the way\n');
    const reply = await hook.attempt(request('E1', { role: 'explorer', angle: 'costs' }, hook.session));
    expect(reply).toMatchObject({ kind: 'error', errorClass: 'io', error: expect.stringMatching(/^Cannot cache the exploration: /) });
  });
});
