import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';
import { batchRoutes, type BatchEnding, type BatchRouteEvent } from '../helpers/model-server/batches.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
import { expectEndedByTheRules, serverTokensByTask, usageByTask } from '../helpers/model-server/session-checks.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { deferred } from '../batch/batch-server.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(model === undefined)('a batch run against a real model', () => {
  test('kill -9 of the coordinator while the batch is in progress, then resume: no resubmission, every result merged once', async () => {
    // The first batch (wave 1) is held in progress until the test releases it; later ones run at once.
    const first = deferred<BatchEnding>();
    let batches = 0;
    const events: BatchRouteEvent[] = [];
    server = await startModelServer({
      model: model!,
      defaultMaxTokens: 96,
      extraRoutes: batchRoutes({ hold: () => (++batches === 1 ? first.promise : Promise.resolve('complete')), log: (event) => events.push(event) }),
    });
    const created = () => events.flatMap((event) => (event.kind === 'create' ? [event] : []));
    const polls = () => events.filter((event) => event.kind === 'retrieve' && event.batch === created()[0]?.batch && event.status === 'in_progress').length;
    const dir = buildSession([
      { id: 'A', title: 'A', description: 'Name a colour.', role: 'worker' },
      { id: 'B', title: 'B', description: 'Name an animal.', role: 'worker' },
      { id: 'C', title: 'C', description: 'Name a fruit.', role: 'worker' },
      { id: 'D', title: 'D', description: 'Tell a story with them.', role: 'worker', deps: 'A;B;C', context_from: 'A;B;C' },
    ]);
    const flags = ['--executor', 'openai', '--model', 'stories260K', '--base-url', server.url, '--batch', '--batch-poll', '0.05'];

    const run = spawnCli('run', dir, ...flags);
    await waitFor(() => created().length === 1 && polls() >= 2, 'the coordinator to poll its batch');
    run.child.kill('SIGKILL');
    await run.exited;
    expect(server.log.records).toEqual([]); // held: the model has answered nothing yet

    const before = polls();
    const resumed = runCli('resume', dir, ...flags);
    await waitFor(() => polls() > before, 'the resumed run to re-attach to the batch');
    first.resolve('complete');
    const { code, stderr } = await resumed;
    expect([0, 1], stderr).toContain(code);

    // Each task's first request went out once, wave 1's in the one batch the kill left running.
    const sent = created().flatMap((batch) => batch.customIds);
    expect(created()[0]!.customIds).toEqual(['A/a1/r1', 'B/a1/r1', 'C/a1/r1']);
    expect(sent.filter((id) => id.endsWith('/r1')).sort()).toEqual([...new Set(sent.filter((id) => id.endsWith('/r1')))].sort());
    expect(events.filter((event) => event.kind === 'upload')).toHaveLength(created().length);
    // Every task ended by the rules, and usage.ndjson holds exactly the server's own token counts, task by task.
    expectEndedByTheRules(dir, server.log, code);
    expect(usageByTask(dir)).toEqual(serverTokensByTask(server.log));
  });
});
