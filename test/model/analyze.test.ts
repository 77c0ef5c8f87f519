import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
import { expectEndedByTheRules } from '../helpers/model-server/session-checks.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(model === undefined)('an analyze session against a real model', () => {
  test('every task ends by the rules, the discussion gate included, and usage.ndjson holds the server’s own token counts', async () => {
    server = await startModelServer({ model: model!, sequences: 2, defaultMaxTokens: 64 });
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-model-')), 'session');
    // Two perspectives, not the default three: each explorer's first prompt is about 2,000 tokens of the model's work.
    const init = await runCli('init', dir, '--template', 'analyze', '--topic', 'Moving our CI to ARM', '--perspectives', 'architecture;risks', '--executor', 'openai', '--model', 'stories260K', '--base-url', server.url);
    expect(init.code, init.stderr).toBe(0);

    const run = await runCli('run', dir, '--auto', '--endpoint-concurrency', '2');
    expect([0, 1], run.stderr).toContain(run.code);
    expect(server.log.aborted()).toEqual([]);
    expect(server.log.peakInFlight).toBeLessThanOrEqual(2);
    expectEndedByTheRules(dir, server.log, run.code);
  });
});
