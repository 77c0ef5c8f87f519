import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { batchRoutes, type BatchEnding, type BatchRouteEvent, type Complete, type HeldBatch } from '../helpers/model-server/batches.js';

/**
 * A loopback OpenAI-compatible server for the batch tests: the Files and Batches routes of
 * test/helpers/model-server/batches.ts over a deterministic `complete` written here, for
 * what no real model produces on demand (an expired batch, a bad first answer).
 *
 * `complete` answers a valid result for the task the prompt names (`Task: <id>`), with 100
 * prompt and 20 completion tokens; a task whose description holds `[[bad-once]]` answers
 * prose first and the valid result to the repair (150 and 25 tokens), and `[[bad-always]]`
 * answers prose every time.
 */
export interface BatchTestServer {
  baseUrl: string;
  /** What the batch routes did, in order. */
  events: BatchRouteEvent[];
  /** The bodies of the synchronous chat completions (not batch lines). */
  chats: unknown[];
  /** The batches created, each with its custom_ids. */
  created(): { batch: string; customIds: string[] }[];
  close(): Promise<void>;
}

export interface BatchTestServerOptions {
  /** How each batch ends (default: each completes at once); the batch stays in_progress until it resolves. */
  hold?: (batch: HeldBatch) => Promise<BatchEnding>;
  /** The first N polls of a batch answer HTTP 500, echoing the request's Authorization header as careless servers do. */
  failPolls?: number;
  /** Told each event as the routes log it, before they answer (a create: the batch exists, its client does not know it yet). */
  onEvent?: (event: BatchRouteEvent) => void;
}

export const kFirstUsage = { prompt_tokens: 100, completion_tokens: 20 };
export const kRepairUsage = { prompt_tokens: 150, completion_tokens: 25 };

export const complete: Complete = async (body) => {
  const messages = ((body as { messages?: { role: string; content: string }[] }).messages ?? []);
  const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
  const isRepair = messages.some((message) => message.role === 'assistant');
  const id = /^Task: *(\S+)/m.exec(prompt)?.[1] ?? 'UNKNOWN';
  const bad = prompt.includes('[[bad-always]]') || (prompt.includes('[[bad-once]]') && !isRepair);
  const usage = isRepair ? kRepairUsage : kFirstUsage;
  const content = bad ? 'Sure! Here is what I think, in prose.' : JSON.stringify({ id, status: 'completed', findings: `Answered ${id}${isRepair ? ' after a repair' : ''}` });
  return {
    status: 200,
    body: {
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: (body as { model?: string }).model ?? 'm',
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
};

export async function startBatchServer(options: BatchTestServerOptions = {}): Promise<BatchTestServer> {
  const events: BatchRouteEvent[] = [];
  const chats: unknown[] = [];
  const log = (event: BatchRouteEvent) => {
    events.push(event);
    options.onEvent?.(event);
  };
  const routes = batchRoutes({ ...(options.hold ? { hold: options.hold } : {}), log });
  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
    });
  });
  let failPolls = options.failPolls ?? 0;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (failPolls > 0 && req.method === 'GET' && /^\/v1\/batches\/[^/]+$/.test(req.url ?? '')) {
      failPolls--;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Internal error for ${req.headers.authorization ?? ''}`, type: 'server_error' } }));
      return;
    }
    if (await routes(req, res, complete)) return;
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      chats.push(body);
      const answer = await complete(body, new AbortController().signal);
      const text = JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `No route ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    events,
    chats,
    created: () => events.flatMap((event) => (event.kind === 'create' ? [{ batch: event.batch, customIds: event.customIds }] : [])),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A promise and the function that settles it: a test holds a batch until it says so. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
