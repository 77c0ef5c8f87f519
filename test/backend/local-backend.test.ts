/**
 * The local backend behind the ExecutionBackend interface: submit, an abort signal,
 * cancelAll and close, on real worker threads and real commands. Commands say they have
 * started by writing their pid to a file; the tests wait on those files, never on time.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { afterEach, describe, expect, test } from 'vitest';
import type { ExecutionBackend } from '../../src/backend/execution-backend.js';
import { LocalBackend } from '../../src/backend/local/local-backend.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import { expectEnded, isRunning, startedPid, waiter } from '../helpers/waiting-commands.js';

const backends: LocalBackend[] = [];
afterEach(async () => {
  for (const backend of backends.splice(0)) {
    await backend.cancelAll();
    await backend.close();
  }
});

function localBackend(sessionDir: string, tasksPerThread = 4): ExecutionBackend {
  const backend = new LocalBackend({ sessionDir, threads: 1, tasksPerThread, workerMemoryMb: 256, endpointConcurrency: undefined });
  backends.push(backend);
  return backend;
}

function request(session: string, id: string, template: string): AttemptRequest {
  return {
    executor: { type: 'command', template },
    task: { id, wave: 1, attempt: 1, session, row: { id, role: 'r' }, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } },
    timeoutMs: 0,
  };
}


const dirs = () => ({ session: mkdtempSync(join(tmpdir(), 'csv-wave-backend-')), marks: mkdtempSync(join(tmpdir(), 'csv-wave-marks-')) });

describe('LocalBackend', () => {
  test('submit runs the attempt on a worker thread and resolves with its reply; nothing is written into the session', async () => {
    const { session } = dirs();
    const backend = localBackend(session);
    const reply = await backend.submit(request(session, 'A', `printf '%s' '${'x'.repeat(600)}'`), new AbortController().signal);
    expect(reply).toMatchObject({
      kind: 'finished',
      status: 'completed',
      findings: expect.stringMatching(/ \[… full output: artifacts\/A\/output\.md\]$/),
      artifacts: [{ name: 'output', content: 'x'.repeat(600) }],
      thread: expect.any(Number),
    });
    expect(readdirSync(session)).toEqual([]);
  });

  test('an agent attempt runs on the calling thread, not on a worker thread, and replies as the pool does', async () => {
    const { session } = dirs();
    const agent: AttemptRequest = { ...request(session, 'A', ''), executor: { type: 'codex', model: 'm' } };
    // Without its prompt context the codex executor refuses at once: no codex is needed to see where it ran.
    const reply = await localBackend(session).submit(agent, new AbortController().signal);
    expect(reply).toMatchObject({ kind: 'error', errorClass: 'task-failure', error: expect.stringMatching(/needs the prompt context/), thread: threadId });
  });

  test('a failing attempt resolves with an error reply', async () => {
    const { session } = dirs();
    const reply = await localBackend(session).submit(request(session, 'A', 'exit 3'), new AbortController().signal);
    expect(reply).toMatchObject({ kind: 'error', errorClass: 'task-failure', error: expect.stringMatching(/^Command exited with code 3/) });
  });

  test('aborting a submit rejects it with an AbortError and ends its command; another attempt runs on', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    const abort = new AbortController();
    const aborted = backend.submit(request(session, 'A', waiter(marks, 'A')), abort.signal);
    const other = backend.submit(request(session, 'B', waiter(marks, 'B')), new AbortController().signal);
    const [pidA, pidB] = [await startedPid(marks, 'A'), await startedPid(marks, 'B')];
    abort.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await expectEnded(pidA);
    expect(isRunning(pidB)).toBe(true);
    process.kill(pidB, 'SIGKILL');
    await expect(other).resolves.toMatchObject({ kind: 'error', errorClass: 'task-failure' });
  });

  test('a submit whose signal is already aborted rejects and runs nothing', async () => {
    const { session, marks } = dirs();
    // One thread, one task at a time, in order: had the first been queued, it would have run before the second.
    const backend = localBackend(session, 1);
    const abort = new AbortController();
    abort.abort();
    await expect(backend.submit(request(session, 'A', `touch '${join(marks, 'ran')}'`), abort.signal)).rejects.toMatchObject({ name: 'AbortError' });
    await backend.submit(request(session, 'B', 'true'), new AbortController().signal);
    expect(existsSync(join(marks, 'ran'))).toBe(false);
  });

  test('cancelAll rejects every running submit with an AbortError and ends their commands with their process groups', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    // A grandchild in the same process group goes too.
    const withChild = `sh -c "echo \\$\\$ > '${join(marks, 'child.pid')}'; exec sleep 600" & ${waiter(marks, 'B')}`;
    const submits = [
      backend.submit(request(session, 'A', waiter(marks, 'A')), new AbortController().signal),
      backend.submit(request(session, 'B', withChild), new AbortController().signal),
    ];
    const outcomes = submits.map((submit) => submit.then(() => 'resolved', (error: Error) => error.name));
    const pids = [await startedPid(marks, 'A'), await startedPid(marks, 'B'), await startedPid(marks, 'child')];
    await backend.cancelAll();
    expect(await Promise.all(outcomes)).toEqual(['AbortError', 'AbortError']);
    for (const pid of pids) await expectEnded(pid);
  });

  test('close ends the pool; a submit after it rejects, saying the backend is closed', async () => {
    const { session } = dirs();
    const backend = localBackend(session);
    await expect(backend.submit(request(session, 'A', 'echo one'), new AbortController().signal)).resolves.toMatchObject({ findings: 'one' });
    await backend.close();
    await expect(backend.submit(request(session, 'B', 'echo two'), new AbortController().signal)).rejects.toThrow(/closed/);
  });
});
