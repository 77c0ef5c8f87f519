import { afterEach, describe, expect, test } from 'vitest';
import { statusOf } from '../../src/core/skip-cause.js';
import { runCli } from '../helpers/cli.js';
import { modelSession } from '../helpers/model-server/model-session.js';
import { readRows } from '../helpers/session-builder.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
import { expectEndedByTheRules, serverTokensByTask, usageByTask } from '../helpers/model-server/session-checks.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  server?.release();
  await server?.close();
  server = undefined;
});

describe.skipIf(model === undefined)('Ctrl-C during a session against a real model', () => {
  test('aborts the requests in flight at the server, exits 130 with their tasks pending, and resume finishes the session', async () => {
    // The first two requests are answered; later ones are held, so that some are surely in flight at the Ctrl-C.
    // 8 tokens cut every answer short of valid JSON, so the two answered are followed by their
    // tasks' repairs, which the server holds. Two tasks, not a pipeline: each first request costs
    // the model a prompt of about 1,800 tokens; one sequence keeps the prompts' common start cached.
    server = await startModelServer({ model: model!, defaultMaxTokens: 8, holdAfter: 2 });
    const dir = modelSession(server.url, [
      { id: 'A', title: 'A', description: 'Name a colour.', role: 'worker' },
      { id: 'B', title: 'B', description: 'Name an animal.', role: 'worker' },
    ]);

    const run = spawnCli('run', dir, '--concurrency', '2', '--endpoint-concurrency', '2', '--grace', '0');
    await server.log.until((log) => log.answered().length >= 2 && log.running().length >= 1);
    // The Ctrl-C comes once the run has taken in both answers: each task answered is done
    // (a line on stdout) or has sent its repair, which the server holds.
    const takenIn = (task: string | undefined) =>
      new RegExp(`^\\[(DONE|FAIL)\\] ${task} `, 'm').test(run.stdoutSoFar()) || server!.log.running().some((record) => record.task === task);
    await waitFor(() => server!.log.answered().every((record) => takenIn(record.task)), 'the run to take in the first two answers');
    run.child.kill('SIGINT');
    const ended = await run.exited;
    expect(ended.code, ended.stderr).toBe(130);

    await server.log.until((log) => log.running().length === 0);
    const aborted = server.log.aborted();
    expect(aborted.length).toBeGreaterThanOrEqual(1);
    expect(server.log.records.every((record) => record.status !== undefined || record.aborted !== undefined)).toBe(true);
    const rows = readRows(dir);
    for (const record of aborted) {
      const row = rows.get(record.task!)!;
      // An answered repair may have come before: the task is pending unless another request of it finished it.
      if (!server.log.answered().some((other) => other.task === record.task && other.n > record.n)) expect(statusOf(row), record.task).toBe('pending');
    }
    expect([...rows.values()].filter((row) => statusOf(row) === 'pending').length).toBeGreaterThanOrEqual(1);
    // Tokens counted are those the server reported; aborted requests reported none.
    expect(usageByTask(dir)).toEqual(serverTokensByTask(server.log));

    server.release();
    const resumed = await runCli('resume', dir);
    expect([0, 1], resumed.stderr).toContain(resumed.code);
    expectEndedByTheRules(dir, server.log, resumed.code);
  });
});
