import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { loadTestModel, startModelServer, type ModelServer } from '../helpers/model-server/index.js';
import { expectEndedByTheRules, serverTokensByTask } from '../helpers/model-server/session-checks.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(model === undefined)('a brainstorm session against a real model', () => {
  test('every task ends by the rules, at most the endpoint concurrency is in flight, and usage.ndjson and status hold the server’s own token counts', async () => {
    // Two sequences, so that requests beyond them wait at the server as at a real one.
    server = await startModelServer({ model: model!, sequences: 2, defaultMaxTokens: 64 });
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-model-')), 'session');
    const init = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Cheaper public transport', '--executor', 'openai', '--model', 'stories260K', '--base-url', server.url);
    expect(init.code, init.stderr).toBe(0);

    const run = await runCli('run', dir, '--endpoint-concurrency', '3');
    expect([0, 1], run.stderr).toContain(run.code);
    expect(server.log.records.length).toBeGreaterThan(0);
    expect(server.log.aborted()).toEqual([]);
    expect(server.log.peakInFlight).toBeLessThanOrEqual(3);
    expectEndedByTheRules(dir, server.log, run.code);

    const total = Object.values(serverTokensByTask(server.log)).reduce(
      (sum, tokens) => ({ prompt: sum.prompt + tokens.prompt_tokens, completion: sum.completion + tokens.completion_tokens }),
      { prompt: 0, completion: 0 },
    );
    const status = JSON.parse((await runCli('status', dir, '--json')).stdout) as { tokens?: unknown };
    expect(status.tokens).toEqual(total);
  });
});
