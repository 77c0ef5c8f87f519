import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession } from '../helpers/session-builder.js';

let server: FakeOpenAiServer;
beforeEach(async () => {
  // 120 prompt tokens per answer, 90 of them served from the provider's prompt cache.
  server = await startFakeOpenAiServer({ cachedTokens: 90 });
});
afterEach(async () => {
  await server.close();
});

describe('the prompt cache share', () => {
  test('status, context.md and report.html say how many of the prompt tokens the provider served from its cache', async () => {
    const dir = buildSession([
      { id: 'A', description: 'first', role: 'writer' },
      { id: 'B', description: 'second', role: 'writer' },
    ]);
    const run = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl);
    expect(run.code, run.stderr).toBe(0);
    const said = 'Prompt cache: 180 of 240 prompt tokens cached (75.0%)';

    const status = await runCli('status', dir);
    expect(status.stdout).toContain(`Tokens: 240 prompt, 60 completion\n${said}\n`);
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as { usage: { prompt: number; cached: number } };
    expect(json.usage).toMatchObject({ prompt: 240, cached: 180 });

    expect(readFileSync(join(dir, 'context.md'), 'utf8')).toContain(`\n${said}.\n`);

    const data = JSON.parse((await runCli('report', dir, '--json')).stdout) as { promptCache: string | null };
    expect(data.promptCache).toBe('180 of 240 prompt tokens cached (75.0%)');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain("fact('prompt cache', D.promptCache)");
  });
});
