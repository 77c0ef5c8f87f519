import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatCompletions, type CompleteFn } from './chat-completion.js';
import { HoldGate } from './hold-gate.js';
import { ModelServerLog } from './server-log.js';
import { SequencePool } from './sequence-pool.js';
import type { TestModel } from './test-model.js';

export type { ChatRecord, ModelServerLog } from './server-log.js';
export type { CompleteFn, CompletionReply } from './chat-completion.js';
export { kModelTestsRequired, kTestModelPath, loadTestModel, type TestModel } from './test-model.js';
export { renderChat } from './chat-prompt.js';

export interface ModelServerOptions {
  /** The model, from loadTestModel() (loaded once per test file). */
  model: TestModel;
  /** Requests generated at once (the context's sequences); the rest wait in arrival order. @default 1 */
  sequences?: number;
  /** Tokens per sequence; node-llama-cpp rounds it up (to 512 at least): `n_ctx` is the size it made. @default 4096 */
  contextSize?: number;
  /** Tokens of an answer whose request names no limit (llama-server's `--n-predict`). @default until the context is full */
  defaultMaxTokens?: number;
  /** Requests after the first N are held unanswered until `release()`; a closed connection lets one go. @default none held */
  holdAfter?: number;
  /**
   * Routes tried before the chat endpoint (the Files and Batches endpoints of batches.ts):
   * resolves true when it answered the request. `complete` runs one chat completion, logged
   * like one that came over HTTP; aborting its signal cancels the generation.
   */
  extraRoutes?: (req: IncomingMessage, res: ServerResponse, complete: CompleteFn) => Promise<boolean>;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>/v1`: the base URL of the OpenAI client (`--base-url`). */
  url: string;
  /** The context size of each sequence, in tokens (what a too-long prompt's 400 names as `n_ctx`). */
  contextSize: number;
  log: ModelServerLog;
  /** Lets the requests `holdAfter` held go on, and every later one. */
  release(): void;
  close(): Promise<void>;
}

/** A body over this is refused (413) before it is read whole. */
const kMaxBodyBytes = 32 * 1024 * 1024;

/**
 * An OpenAI-compatible chat completions server on 127.0.0.1 and a free port that answers
 * with the real model. A request whose connection closes before the answer is aborted:
 * waiting, it leaves the queue; generating, the generation stops.
 */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const context = await options.model.model.createContext({
    contextSize: options.contextSize ?? 4096,
    sequences: options.sequences ?? 1,
    // More threads stall generation on a loaded 2-core machine; one answers in milliseconds.
    threads: 1,
  });
  const log = new ModelServerLog();
  const gate = new HoldGate(options.holdAfter);
  const chat = new ChatCompletions(options.model, new SequencePool(context), gate, log, {
    contextSize: context.contextSize,
    defaultMaxTokens: options.defaultMaxTokens,
  });

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: { code: 500, message: String(error), type: 'server_error' } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Aborts what the request started once the client goes away before the whole answer left.
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(new Error('the client closed the connection'));
    });
    if (options.extraRoutes !== undefined && (await options.extraRoutes(req, res, chat.complete))) return;
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      sendJson(res, 404, { error: { code: 404, message: `No route ${req.method} ${req.url}`, type: 'not_found_error' } });
      return;
    }
    const body = await readJson(req);
    if (body === kGone) return;
    if (body === kTooBig) return sendJson(res, 413, { error: { code: 413, message: `The body is over ${kMaxBodyBytes} bytes`, type: 'invalid_request_error' } });
    if (body === kNotJson) return sendJson(res, 400, { error: { code: 400, message: 'The body is not JSON', type: 'invalid_request_error' } });
    let reply;
    try {
      reply = await chat.complete(body, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) return; // nobody is left to answer
      throw error;
    }
    sendJson(res, reply.status, reply.body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    contextSize: context.contextSize,
    log,
    release: () => gate.open(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Requests the closed connections aborted finish their clean-up before the context goes.
      await log.until((current) => current.inFlight === 0);
      await context.dispose();
    },
  };
}

const kTooBig = Symbol('too big');
const kNotJson = Symbol('not JSON');
const kGone = Symbol('client gone');

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > kMaxBodyBytes) {
        req.removeAllListeners('data');
        req.resume();
        resolve(kTooBig);
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    // A client gone before the whole body came: nothing to answer.
    req.on('close', () => {
      if (!req.complete) resolve(kGone);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(kNotJson);
      }
    });
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
