/**
 * Module attempts go to the worker pool in batches (issue 12): many per message, replies
 * back per tick of the worker. Each task still gets its own reply; a task that spins or
 * kills its thread fails with the tasks that had not replied, not those that had; short
 * tasks answer while a long one of the same batch still runs. The order of events comes
 * from files the test writes after it saw replies, never from time.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { LocalBackend } from '../../src/backend/local/local-backend.js';
import type { AttemptReply, AttemptRequest } from '../../src/executors/messages.js';

const kModule = new URL('./fixtures/batch-module.mjs', import.meta.url).pathname;

const backends: LocalBackend[] = [];
afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
});

function localBackend(threads: number, tasksPerThread: number): LocalBackend {
  const session = mkdtempSync(join(tmpdir(), 'csv-wave-batches-'));
  const backend = new LocalBackend({ sessionDir: session, threads, tasksPerThread, workerMemoryMb: 256, endpointConcurrency: undefined });
  backends.push(backend);
  return backend;
}

function request(id: string, act = 'return', file = '', timeoutMs = 0): AttemptRequest {
  return {
    executor: { type: 'module', path: kModule },
    task: { id, wave: 1, attempt: 1, session: 's', row: { id, role: 'r', act, file }, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } },
    timeoutMs,
  };
}

const findings = (reply: AttemptReply) => (reply.kind === 'finished' ? reply.findings : `${reply.errorClass}: ${reply.error}`);

describe('module attempts in batches', () => {
  test('a batch of many tasks gives each task its own reply, results and errors alike', async () => {
    const backend = localBackend(2, 64);
    const ids = Array.from({ length: 300 }, (_, index) => `T${index}`);
    // All submitted in one tick: they go in batches of many tasks each.
    const replies = await Promise.all(ids.map((id, index) => backend.submit(request(id, index % 7 === 3 ? 'throw' : 'return'))));
    replies.forEach((reply, index) => {
      const id = ids[index]!;
      expect(findings(reply)).toBe(index % 7 === 3 ? `task-failure: thrown by ${id}` : `done ${id}`);
    });
  });

  test('replies of short tasks arrive while a long task of the same batch still runs', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-batch-marks-'));
    const release = join(marks, 'release');
    // One thread, four tasks at once: the four submits of this tick are one batch.
    const backend = localBackend(1, 4);
    const long = backend.submit(request('LONG', 'wait', release));
    const short = await Promise.all(['A', 'B', 'C'].map((id) => backend.submit(request(id))));
    // Had the batch's replies waited for its end, the short ones would never have come back.
    expect(short.map(findings)).toEqual(['done A', 'done B', 'done C']);
    writeFileSync(release, '');
    expect(findings(await long)).toBe('waited LONG');
  });

  test('one spinning task in a batch: its thread is ended at its timeout + grace; the tasks that had replied keep their replies, the others fail as worker-crash', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-batch-marks-'));
    const go = join(marks, 'go');
    const backend = localBackend(1, 4);
    const timeoutMs = 10_000;
    const spinning = backend.submit(request('SPIN', 'spin', go, timeoutMs));
    const stuck = backend.submit(request('STUCK', 'wait', join(marks, 'never'), timeoutMs));
    const short = await Promise.all(['A', 'B'].map((id) => backend.submit(request(id, 'return', '', timeoutMs))));
    expect(short.map(findings)).toEqual(['done A', 'done B']);
    writeFileSync(go, '');
    // Both had started on the thread that was ended: either may be the spinner, so both fail as
    // worker-crash, which the engine retries on a thread of its own.
    const shared = /^worker-crash: Timed out after 10s; its worker thread, shared with other tasks, was ended$/;
    expect(findings(await spinning)).toMatch(shared);
    expect(findings(await stuck)).toMatch(shared);
    // A fresh thread takes the next batch.
    const after = await backend.submit(request('AFTER'));
    expect(findings(after)).toBe('done AFTER');
    expect(after.thread).not.toBe(short[0]!.thread);
  });

  test('one task that exits the process in a batch fails with the tasks that had not replied; the next batch runs on a fresh thread', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-batch-marks-'));
    const go = join(marks, 'go');
    const backend = localBackend(1, 4);
    const exiting = backend.submit(request('EXIT', 'exit', go));
    const stuck = backend.submit(request('STUCK', 'wait', join(marks, 'never')));
    const short = await Promise.all(['A', 'B'].map((id) => backend.submit(request(id))));
    expect(short.map(findings)).toEqual(['done A', 'done B']);
    writeFileSync(go, '');
    expect(findings(await exiting)).toBe('worker-crash: Worker thread died: worker exited with code: 3');
    expect(findings(await stuck)).toBe('worker-crash: Worker thread died: worker exited with code: 3');
    const after = await backend.submit(request('AFTER'));
    expect(findings(after)).toBe('done AFTER');
    expect(after.thread).not.toBe(short[0]!.thread);
  });
});
