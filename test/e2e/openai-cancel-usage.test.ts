import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import type { UsageLine } from '../../src/knowledge/usage.js';

let server: FakeOpenAiServer;

beforeEach(async () => {
  // 120 prompt + 30 completion tokens per answer.
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  await server.close();
});

const key = (line: UsageLine) => `${line.task} ${line.attempt}/${line.request} ${line.kind}${line.reported ? '' : ' unreported'}`;
const model = () => ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl];
/** Requests the server answered: the fake answers every first request of these tasks and holds every repair. */
const answered = () => server.requests.filter((request) => !(request.body.messages ?? []).some((message) => message.role === 'assistant')).length;
const repairsHeld = () => server.requests.length - answered();

describe('the tokens of an attempt cancelled by Ctrl-C', () => {
  test('Ctrl-C mid-repair: usage.ndjson holds the answered first request once; after resume no request is counted twice', async () => {
    const dir = buildSession([
      // Prose with usage, then a repair the server holds until the client goes away.
      { id: 'HELD', description: '[[fake:invalid-then-slow]]', role: 'writer' },
      { id: 'PLAIN', description: 'Just do it', role: 'writer' },
    ]);
    const run = spawnCli('run', dir, ...model(), '--grace', '0');
    // PLAIN is done and HELD has sent its repair: its first request was answered, its attempt is still running.
    await waitFor(() => repairsHeld() === 1 && /^\[DONE\] PLAIN /m.test(run.stdoutSoFar()), 'the repair to be held and PLAIN done');
    run.child.kill('SIGINT');
    const ended = await run.exited;
    expect(ended.code, ended.stderr).toBe(130);
    expect(readRows(dir).get('HELD')!.status).toBe('pending');

    // The cancelled attempt's answered request is counted once, and PLAIN's (told twice: live and in its reply) once.
    expect(usageLinesOf(dir).map(key).sort()).toEqual(['HELD 1/1 first', 'PLAIN 1/1 first']);
    for (const line of usageLinesOf(dir)) expect(line).toMatchObject({ prompt_tokens: 120, completion_tokens: 30 });
    const status = await runCli('status', dir, '--json');
    expect((JSON.parse(status.stdout) as { usage: { requests: number } }).usage.requests).toBe(answered());

    // The resumed attempt of HELD is held again: its own timeout ends it, unreported, and it fails.
    const resumed = await runCli('resume', dir, ...model(), '--timeout', '1', '--retries', '0');
    expect(resumed.code, resumed.stderr).toBe(1);
    const lines = usageLinesOf(dir);
    expect(lines.map(key).sort()).toEqual(['HELD 1/1 first', 'HELD 1/1 first', 'HELD 1/2 repair unreported', 'PLAIN 1/1 first']);
    // Each request the server answered is one reported line: none lost, none written twice.
    expect(lines.filter((line) => line.reported).length).toBe(answered());
    expect(new Set(lines.map((line) => `${line.ts} ${key(line)}`)).size).toBe(lines.length);
  });
});
