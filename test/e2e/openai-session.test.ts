import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { readRows } from '../helpers/session-builder.js';

/** A key no file, prompt or log line could hold by chance. */
const kApiKey = 'sk-e2e-DO-NOT-WRITE-9f27c1d4b6a8e305';

/** Every file under a folder, hidden ones included. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

let server: FakeOpenAiServer | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

describe('brainstorm through an OpenAI-compatible endpoint', () => {
  test('the API key reaches the server and nothing else: no file of the session holds it; tokens are counted', async () => {
    server = await startFakeOpenAiServer();
    vi.stubEnv('OPENAI_API_KEY', kApiKey);
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-e2e-')), 'session');
    const init = await runCli('init', dir, '--template', 'brainstorm', '--topic', 'Quieter open-plan offices',
      '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl);
    expect(init.code, init.stderr).toBe(0);
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    expect(`${init.stdout}${init.stderr}${run.stdout}${run.stderr}`).not.toContain(kApiKey);

    // The fake challenger always finds a HIGH issue: the round limit ends the loop.
    const rows = readRows(dir);
    expect(rows.get('GC-CHECK-001')!.gc_signal).toBe('REVISION_NEEDED');
    expect(rows.get('GC-CHECK-002')!.findings).toMatch(/^GC decision: CONVERGED \(round limit 2 reached/);
    expect(rows.get('EVAL-001')!.status).toBe('completed');

    // Every model task was sent, with the key as the bearer token; interactive and skipped ones were not.
    const called = ['IDEA-001', 'IDEA-002', 'CHALLENGE-001', 'IDEA-003', 'CHALLENGE-002', 'SYNTH-001', 'EVAL-001'];
    const prompted = server.prompts().map((prompt) => /^Task: *(\S+)/m.exec(prompt)?.[1]);
    expect([...prompted].sort()).toEqual([...called].sort());
    for (const request of server.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${kApiKey}`);
      expect(request.body.model).toBe('m');
    }
    expect(server.prompts().find((prompt) => /^Task: *SYNTH-001/m.test(prompt))).toContain('Quieter open-plan offices');

    const files = filesUnder(dir);
    expect(files.some((file) => file.includes(`${join('.csv-wave', '')}`))).toBe(true);
    for (const file of files) expect(readFileSync(file).includes(kApiKey), file).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toMatchObject({
      executor: { type: 'openai', model: 'm', base_url: server.baseUrl },
    });

    // Tokens per task in usage.ndjson (the fake server reports 120 + 30 per answer) …
    const usage = readFileSync(join(dir, 'usage.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { task: string; prompt_tokens: number; completion_tokens: number });
    expect(usage.map((line) => line.task).sort()).toEqual([...called].sort());
    for (const line of usage) expect(line).toMatchObject({ prompt_tokens: 120, completion_tokens: 30 });
    // … and their totals in `status`.
    const status = await runCli('status', dir);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Tokens: ${120 * called.length} prompt, ${30 * called.length} completion`);
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as { tokens?: unknown };
    expect(json.tokens).toEqual({ prompt: 120 * called.length, completion: 30 * called.length });
  });
});
