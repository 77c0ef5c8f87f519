import { request } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { loadTestModel, renderChat, startModelServer, type ModelServer } from '../helpers/model-server/index.js';

const model = await loadTestModel();

let server: ModelServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Reply {
  status: number;
  body: {
    choices?: { message: { content: string }; finish_reason: string }[];
    usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: unknown };
    error?: Record<string, unknown>;
  };
}

async function post(url: string, body: unknown): Promise<Reply> {
  const response = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

/** Sends a request whose connection the test closes itself (fetch keeps sockets for reuse). */
function postRaw(url: string, body: unknown): { close(): void } {
  const req = request(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } });
  req.on('error', () => {}); // the test closes it: ECONNRESET is expected
  req.end(JSON.stringify(body));
  return { close: () => req.destroy() };
}

const kStory = [{ role: 'user', content: 'Once upon a time there was a little cat.' }];

/** No grammar and no token limit: the model writes until the context is full, which takes long. */
const kEndless = { messages: kStory };

describe.skipIf(model === undefined)('the real-model server', () => {
  test('the response_format schema is the grammar: the answer parses and matches it, and holds no property the schema does not require', async () => {
    server = await startModelServer({ model: model! });
    const schema = {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['completed', 'failed'] },
        findings: { type: 'string', minLength: 1, maxLength: 40 },
        count: { type: 'integer' },
        note: { type: 'string' },
      },
      required: ['status', 'findings', 'count'],
      additionalProperties: false,
    };
    const reply = await post(server.url, {
      model: 'stories',
      messages: kStory,
      response_format: { type: 'json_schema', json_schema: { name: 'result', strict: true, schema } },
      max_completion_tokens: 400,
    });
    expect(reply.status).toBe(200);
    const choice = reply.body.choices![0]!;
    expect(choice.finish_reason).toBe('stop');
    const answer = JSON.parse(choice.message.content) as Record<string, unknown>;
    expect(Object.keys(answer).sort()).toEqual(['count', 'findings', 'status']);
    expect(['completed', 'failed']).toContain(answer['status']);
    expect(typeof answer['findings']).toBe('string');
    expect((answer['findings'] as string).length).toBeGreaterThanOrEqual(1);
    expect((answer['findings'] as string).length).toBeLessThanOrEqual(40);
    expect(Number.isInteger(answer['count'])).toBe(true);
  });

  test('usage: prompt tokens are the tokenizer count of the prompt; max_completion_tokens and max_tokens cut the answer (finish_reason length)', async () => {
    server = await startModelServer({ model: model! });
    const promptTokens = model!.model.tokenize(renderChat(kStory)).length;

    const cut = await post(server.url, { messages: kStory, max_completion_tokens: 5 });
    expect(cut.status).toBe(200);
    expect(cut.body.choices![0]!.finish_reason).toBe('length');
    // A fresh sequence: nothing of the prompt was cached.
    expect(cut.body.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5, prompt_tokens_details: { cached_tokens: 0 } });

    // The same prompt again: the sequence still holds it, so it comes from the cache.
    const older = await post(server.url, { messages: kStory, max_tokens: 7 });
    expect(older.body.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 7 });
    const cached = (older.body.usage as { prompt_tokens_details: { cached_tokens: number } }).prompt_tokens_details.cached_tokens;
    expect(cached).toBeGreaterThan(promptTokens / 2);
    expect(cached).toBeLessThanOrEqual(promptTokens);

    // The log holds what was reported, request by request.
    expect(server.log.answered().map((record) => record.usage)).toEqual([
      { prompt_tokens: promptTokens, completion_tokens: 5, cached_tokens: 0 },
      { prompt_tokens: promptTokens, completion_tokens: 7, cached_tokens: cached },
    ]);

    const bad = await post(server.url, { messages: kStory, max_completion_tokens: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error' });
  });

  test("a prompt over the context size gets llama.cpp's HTTP 400, with the prompt's tokens and the context size", async () => {
    server = await startModelServer({ model: model!, contextSize: 512 });
    const messages = [{ role: 'user', content: 'Once upon a time there was a little cat. '.repeat(80) }];
    const tokens = model!.model.tokenize(renderChat(messages)).length;
    expect(tokens).toBeGreaterThan(server.contextSize);
    const reply = await post(server.url, { messages, max_completion_tokens: 5 });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: tokens,
        n_ctx: server.contextSize,
      },
    });
    expect(server.log.records[0]).toMatchObject({ status: 400, generationMs: 0 });
  });

  test('a closed connection cancels its generation, and a request waiting for a sequence leaves the queue; the freed sequence serves the next request', async () => {
    server = await startModelServer({ model: model!, sequences: 2 });
    const clients = [postRaw(server.url, kEndless), postRaw(server.url, kEndless), postRaw(server.url, kEndless)];
    // Two sequences: two generate, the third waits.
    await server.log.until((log) => log.generating === 2 && log.inFlight === 3);
    for (const client of clients) client.close();
    await server.log.until((log) => log.aborted().length === 3);
    const aborted = server.log.aborted();
    expect(aborted.filter((record) => record.aborted === 'generating')).toHaveLength(2);
    expect(aborted.filter((record) => record.aborted === 'waiting')).toHaveLength(1);
    for (const record of aborted) expect(record.status).toBeUndefined();
    // A generation that ran on would have filled the context.
    for (const record of aborted.filter((one) => one.aborted === 'generating')) expect(record.generatedBeforeAbort).toBeLessThan(server.contextSize - 20);
    expect(server.log.peakGenerating).toBe(2);
    expect(server.log.peakInFlight).toBe(3);

    const next = await post(server.url, { messages: kStory, max_completion_tokens: 3 });
    expect(next.status).toBe(200);
  });

  test('a request takes the free sequence that holds the longest start of its prompt: each repair finds its own first prompt evaluated', async () => {
    server = await startModelServer({ model: model!, sequences: 2 });
    const system = { role: 'system', content: 'You are one worker in a pipeline of tasks. '.repeat(12) };
    const tasks = ['Task: A\nName a colour.', 'Task: B\nName an animal.'].map((content) => [system, { role: 'user', content }]);
    const first = await Promise.all(tasks.map((messages) => post(server!.url, { messages, max_completion_tokens: 6 })));
    // One after the other: the sequence the first repair used is free again, and last released, when the second comes.
    const repairs: Reply[] = [];
    for (const [i, messages] of tasks.entries()) {
      const answer = { role: 'assistant', content: first[i]!.body.choices![0]!.message.content };
      repairs.push(await post(server.url, { messages: [...messages, answer, { role: 'user', content: 'Again, in JSON.' }], max_completion_tokens: 6 }));
    }
    for (const [i, repair] of repairs.entries()) {
      const cached = (repair.body.usage as { prompt_tokens_details: { cached_tokens: number } }).prompt_tokens_details.cached_tokens;
      // Its first request's whole prompt (but the last token or so, which the answer's first token may merge with), not only the system prompt both share.
      expect(cached, `repair ${i + 1}`).toBeGreaterThanOrEqual(first[i]!.body.usage!.prompt_tokens - 2);
    }
  });

  test('holdAfter keeps later requests unanswered until release(); extraRoutes run completions through the same log', async () => {
    server = await startModelServer({
      model: model!,
      holdAfter: 1,
      extraRoutes: async (req, res, complete) => {
        if (req.url !== '/v1/echo') return false;
        const reply = await complete({ messages: kStory, max_completion_tokens: 2 }, new AbortController().signal);
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
        return true;
      },
    });
    expect((await post(server.url, { messages: kStory, max_completion_tokens: 2 })).status).toBe(200);
    const held = post(server.url, { messages: kStory, max_completion_tokens: 2 });
    await server.log.until((log) => log.records.length === 2);
    expect(server.log.running()).toHaveLength(1);
    expect(server.log.generating).toBe(0);
    server.release();
    expect((await held).status).toBe(200);

    const extra = await fetch(`${server.url}/echo`, { method: 'POST' });
    expect(extra.status).toBe(200);
    expect(server.log.answered().map((record) => record.usage?.completion_tokens)).toEqual([2, 2, 2]);
  });
});
