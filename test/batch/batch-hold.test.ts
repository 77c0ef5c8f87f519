import { afterEach, describe, expect, test } from 'vitest';
import { BatchBackend } from '../../src/backend/openai-batch/batch-backend.js';
import type { BatchJournalEntry } from '../../src/backend/openai-batch/batch-record.js';
import { AttemptNotRun } from '../../src/backend/execution-backend.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import { startBatchServer, type BatchTestServer } from './batch-server.js';

let server: BatchTestServer | undefined;
let backend: BatchBackend | undefined;
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  await server?.close();
  server = undefined;
});

function attempt(id: string, description = `Describe ${id}`): AttemptRequest {
  return {
    executor: { type: 'openai', model: 'm', baseUrl: server!.baseUrl },
    task: {
      id,
      wave: 1,
      attempt: 1,
      session: '/nonexistent',
      row: { id, title: id, description, role: 'worker' },
      prev_context: 'No previous context available',
      upstream: { deps: [], wisdom: {}, warnings: [] },
    },
    prompt: { pipeline: 'generic', topic: '', discoveries: '', upstream: '', wisdom: '' },
    timeoutMs: 0,
  };
}

function batchBackend(record: (entry: BatchJournalEntry) => void = () => {}): BatchBackend {
  return new BatchBackend({ model: 'm', baseUrl: server!.baseUrl, repair: 'batch', cancelOnStop: false, maxPollMs: 50, open: [], record, progress: () => {}, warn: () => {} });
}

describe('holdBack: the budget is spent while attempts wait for their batch', () => {
  test('first requests waiting for the next batch are not sent: their submits reject with AttemptNotRun, and so do later ones', async () => {
    server = await startBatchServer();
    backend = batchBackend();
    const waiting = [backend.submit(attempt('A')), backend.submit(attempt('B'))];
    backend.holdBack();
    for (const submit of waiting) await expect(submit).rejects.toBeInstanceOf(AttemptNotRun);
    await expect(backend.submit(attempt('C'))).rejects.toBeInstanceOf(AttemptNotRun);
    expect(server.events.filter((event) => event.kind === 'upload' || event.kind === 'create')).toEqual([]);
  });

  test('the repair of an attempt whose first answer came goes out all the same: a running attempt finishes', async () => {
    server = await startBatchServer();
    let held = false;
    // The first batch's end is journaled in the turn after its answers: B's repair waits for the next batch then.
    const hold = (entry: BatchJournalEntry) => {
      if (entry.type === 'batch-end' && !held) {
        held = true;
        backend!.holdBack();
      }
    };
    backend = batchBackend(hold);
    const [a, b] = [backend.submit(attempt('A')), backend.submit(attempt('B', 'Describe B [[bad-once]]'))];
    expect(await a).toMatchObject({ kind: 'finished', status: 'completed', findings: 'Answered A' });
    expect(await b).toMatchObject({ kind: 'finished', status: 'completed', findings: 'Answered B after a repair' });
    expect(held).toBe(true);
    expect(server.created().map((created) => created.customIds)).toEqual([['A/a1/r1', 'B/a1/r1'], ['B/a1/r2']]);
  });
});
