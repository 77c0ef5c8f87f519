import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../helpers/fake-openai-server.js';
import { buildSession, readRows } from '../helpers/session-builder.js';

// A model that sets supervision_verdict "block" unasked would skip everything downstream.
// Only a checkpoint's verdict counts (the generic pipeline's `supervisor` role); from any
// other task it is dropped, and the run says so naming the task.

let server: FakeOpenAiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('supervision verdicts of model answers in a run', () => {
  test('a block from a task that is no checkpoint is dropped with a warning: its dependents run', async () => {
    server = await startFakeOpenAiServer();
    const dir = buildSession([
      { id: 'W-1', description: 'Write it [[fake:block]]', role: 'writer' },
      { id: 'W-2', description: 'Build on it', role: 'writer', deps: 'W-1' },
    ]);
    const result = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^warning: W-1: the model's supervision_verdict "block" and supervision_score 0\.1 dropped: role writer is not a checkpoint/m);
    const rows = readRows(dir);
    expect(rows.get('W-1')!.status).toBe('completed');
    expect(rows.get('W-2')!.status).toBe('completed');
  });

  test("a checkpoint's block stops what comes after it", async () => {
    server = await startFakeOpenAiServer();
    const dir = buildSession([
      { id: 'W-1', description: 'Write it', role: 'writer' },
      { id: 'CHECK-1', description: 'Check W-1 [[fake:block]]', role: 'supervisor', deps: 'W-1' },
      { id: 'W-2', description: 'Build on it', role: 'writer', deps: 'CHECK-1' },
    ]);
    const result = await runCli('run', dir, '--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).not.toContain('dropped');
    const rows = readRows(dir);
    expect(rows.get('CHECK-1')!.status).toBe('completed');
    expect(rows.get('W-2')).toMatchObject({ status: 'skipped', error: expect.stringMatching(/^Blocked by checkpoint CHECK-1/) });
    // The checkpoint got the supervisor prompt, which asks for the verdict.
    expect(server.prompts().find((prompt) => prompt.includes('Task: CHECK-1'))).toContain('"supervision_verdict"');
  });
});
