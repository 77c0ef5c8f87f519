import OpenAI, { toFile } from 'openai';
import { afterEach, describe, expect, test } from 'vitest';
import { BatchApi, kLaunchKey } from '../../src/backend/openai-batch/batch-api.js';
import { lineAnswer, readOutputLines } from '../../src/backend/openai-batch/batch-lines.js';
import { deferred, startBatchServer, type BatchTestServer } from './batch-server.js';
import type { BatchEnding } from '../helpers/model-server/batches.js';

let server: BatchTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const line = (customId: string) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: `Task: ${customId}` }] } });

async function submit(client: OpenAI, text: string) {
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

describe('the test server speaks the Files and Batches APIs as the openai client expects', () => {
  test('validating → in_progress (held) → finalizing → completed, with request counts and an output file by custom_id', async () => {
    const release = deferred<BatchEnding>();
    server = await startBatchServer({ hold: () => release.promise });
    const client = new OpenAI({ apiKey: 'x', baseURL: server.baseUrl, maxRetries: 0 });
    const created = await submit(client, `${line('T1')}\n${line('T2')}\n`);
    expect(created.status).toBe('validating');
    expect((await client.batches.retrieve(created.id)).status).toBe('in_progress');
    expect((await client.batches.retrieve(created.id)).request_counts).toEqual({ total: 2, completed: 0, failed: 0 });
    release.resolve('complete');
    let batch = await client.batches.retrieve(created.id);
    while (batch.status === 'in_progress') batch = await client.batches.retrieve(created.id);
    expect(batch.status).toBe('finalizing');
    batch = await client.batches.retrieve(created.id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const output = readOutputLines(await (await client.files.content(batch.output_file_id!)).text());
    expect([...output.keys()]).toEqual(['T1', 'T2']);
    const answer = lineAnswer(output.get('T1')!);
    expect(answer.kind === 'completion' && answer.completion.choices[0]?.message.content).toContain('"id":"T1"');
  });

  test('an input file with a duplicate custom_id fails the batch, naming the line; cancel stops a held batch', async () => {
    server = await startBatchServer({ hold: () => new Promise<BatchEnding>(() => {}) });
    const client = new OpenAI({ apiKey: 'x', baseURL: server.baseUrl, maxRetries: 0 });
    const bad = await submit(client, `${line('T1')}\n${line('T1')}\n`);
    const failed = await client.batches.retrieve(bad.id);
    expect(failed.status).toBe('failed');
    expect(failed.errors?.data).toEqual([expect.objectContaining({ code: 'duplicate_custom_id', line: 2 })]);

    const held = await submit(client, `${line('T3')}\n`);
    expect((await client.batches.retrieve(held.id)).status).toBe('in_progress');
    expect((await client.batches.cancel(held.id)).status).toBe('cancelling');
    expect((await client.batches.retrieve(held.id)).status).toBe('cancelled');
    await expect(client.batches.cancel(held.id)).rejects.toMatchObject({ status: 400 });
    await expect(client.batches.retrieve('batch_none')).rejects.toMatchObject({ status: 404 });
  });
});

describe('a batch is found by the launch marker in its metadata', () => {
  test('batches are listed newest first, page by page; findLaunched finds one 105 batches back, and stops at those made before its launch', async () => {
    server = await startBatchServer({ hold: () => new Promise<BatchEnding>(() => {}) });
    const api = new BatchApi({ baseUrl: server.baseUrl });
    const file = await api.upload(`${line('T1')}\n`);
    const marked = await api.create(file, 'launch-1');
    expect(marked.metadata).toEqual({ source: 'csv-wave', [kLaunchKey]: 'launch-1' });
    for (let index = 0; index < 104; index++) await api.create(file, `other-${index}`);
    const client = new OpenAI({ apiKey: 'x', baseURL: server.baseUrl, maxRetries: 0 });
    const first = await client.batches.list({ limit: 100 });
    expect(first.data).toHaveLength(100);
    expect(first.data[0]!.metadata).toMatchObject({ [kLaunchKey]: 'other-103' });
    expect(first.hasNextPage()).toBe(true);

    const now = Date.now() / 1000;
    expect((await api.findLaunched('launch-1', now))?.id).toBe(marked.id);
    const lists = () => server!.events.filter((event) => event.kind === 'list').length;
    const before = lists();
    expect(await api.findLaunched('never-made', now)).toBeUndefined();
    expect(lists() - before).toBe(2);
    // A launch an hour and more after every batch: the first one listed is older, the look-up stops there.
    const later = lists();
    expect(await api.findLaunched('never-made', now + 7200)).toBeUndefined();
    expect(lists() - later).toBe(1);
  });
});

describe('an output line becomes an answer or an error class, as a synchronous call would', () => {
  const errorLine = (status: number, code?: string) => ({ custom_id: 'x', response: { status_code: status, body: { error: { message: 'no', ...(code ? { code } : {}) } } }, error: null });
  test.each([
    [errorLine(429), 'rate-limited'],
    [errorLine(429, 'insufficient_quota'), 'task-failure'],
    [errorLine(500), 'transient'],
    [errorLine(408), 'transient'],
    [errorLine(400), 'task-failure'],
    [{ custom_id: 'x', response: null, error: { code: 'batch_expired', message: 'expired' } }, 'transient'],
  ] as const)('%j is %s', (output, errorClass) => {
    expect(lineAnswer(output)).toMatchObject({ kind: 'error', errorClass });
  });
});
