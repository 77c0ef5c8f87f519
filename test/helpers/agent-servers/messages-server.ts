import type { ServerResponse } from 'node:http';
import {
  nextReply,
  startEvents,
  startLoopbackServer,
  writeEvent,
  writeJson,
  type HangReply,
  type HttpErrorReply,
  type LoopbackServer,
  type RecordedRequest,
  type Script,
} from './common.js';

/**
 * A scripted Anthropic Messages-API server (POST /v1/messages, streamed or not), what
 * `claude -p` speaks with ANTHROPIC_BASE_URL. Each request gets the script's next reply; a
 * script run out answers with an HTTP 500. `claude --json-schema` takes its answer from
 * a call of its `StructuredOutput` tool: the turn ends on a call whose input fits the
 * schema (claude checks it, and answers one that does not with an error tool result).
 * `HEAD /` (claude's reachability check) gets a 200.
 */

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

export type MessagesReply =
  /** An assistant text, stop_reason end_turn. */
  | { kind: 'text'; text: string; usage?: MessagesUsage }
  /** A tool call, stop_reason tool_use. */
  | { kind: 'tool'; name: string; input: unknown; usage?: MessagesUsage }
  | HttpErrorReply
  | HangReply;

export interface MessagesServer extends LoopbackServer {
  /** The POST /v1/messages bodies, in order. */
  messageBodies(): MessagesRequest[];
}

export interface MessagesRequest {
  model?: string;
  system?: unknown;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string; description?: string; input_schema?: Record<string, unknown> }>;
  stream?: boolean;
  max_tokens?: number;
  [key: string]: unknown;
}

export const kDefaultMessagesUsage: MessagesUsage = { input_tokens: 200, output_tokens: 40, cache_creation_input_tokens: 10, cache_read_input_tokens: 50 };

const isMessages = (request: RecordedRequest) => request.method === 'POST' && /^\/v1\/messages(\?|$)/.test(request.url);

/** A structured answer: the StructuredOutput call with `input`. */
export function structuredAnswer(input: unknown, usage?: MessagesUsage): MessagesReply {
  return { kind: 'tool', name: 'StructuredOutput', input, ...(usage === undefined ? {} : { usage }) };
}

export async function startMessagesServer(script: Script<MessagesReply>): Promise<MessagesServer> {
  let index = 0;
  const hanging: ServerResponse[] = [];
  const server = await startLoopbackServer(
    async (request, response) => {
      if (request.method === 'HEAD') {
        response.writeHead(200);
        response.end();
        return;
      }
      if (request.method === 'POST' && request.url.startsWith('/v1/messages/count_tokens')) return writeJson(response, 200, { input_tokens: 100 });
      if (!isMessages(request)) return writeJson(response, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${request.method} ${request.url}` } });
      const reply = await nextReply(script, request, index++, {
        kind: 'http-error',
        status: 500,
        body: { type: 'error', error: { type: 'api_error', message: 'the script ran out' } },
      });
      if (reply.kind === 'hang') {
        hanging.push(response);
        return;
      }
      if (reply.kind === 'http-error') return writeJson(response, reply.status, reply.body, reply.headers);
      const body = request.body as MessagesRequest | undefined;
      const model = body?.model ?? 'scripted';
      if (body?.stream === true) streamReply(response, reply, index, model);
      else writeJson(response, 200, wholeMessage(reply, index, model));
    },
    isMessages,
  );
  return {
    ...server,
    messageBodies: () => server.requests.filter(isMessages).map((request) => request.body as MessagesRequest),
    close: async () => {
      for (const response of hanging) response.destroy();
      await server.close();
    },
  };
}

type ContentReply = Extract<MessagesReply, { kind: 'text' | 'tool' }>;

function contentBlock(reply: ContentReply, index: number): Record<string, unknown> {
  return reply.kind === 'text' ? { type: 'text', text: reply.text } : { type: 'tool_use', id: `toolu_${index}`, name: reply.name, input: reply.input };
}

function fullUsage(reply: ContentReply): Required<MessagesUsage> {
  const usage = reply.usage ?? kDefaultMessagesUsage;
  return { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage };
}

function wholeMessage(reply: ContentReply, index: number, model: string): Record<string, unknown> {
  return {
    id: `msg_${index}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [contentBlock(reply, index)],
    stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: fullUsage(reply),
  };
}

function streamReply(response: ServerResponse, reply: ContentReply, index: number, model: string): void {
  const usage = fullUsage(reply);
  startEvents(response);
  writeEvent(response, 'message_start', {
    type: 'message_start',
    message: {
      id: `msg_${index}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (reply.kind === 'text') {
    writeEvent(response, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    writeEvent(response, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } });
  } else {
    writeEvent(response, 'content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: `toolu_${index}`, name: reply.name, input: {} },
    });
    writeEvent(response, 'content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) },
    });
  }
  writeEvent(response, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  writeEvent(response, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  writeEvent(response, 'message_stop', { type: 'message_stop' });
  response.end();
}

/** The text of a Messages request's user turns, tool results included: where a test finds the task a prompt is for. */
export function userText(body: MessagesRequest | undefined): string {
  return JSON.stringify((body?.messages ?? []).filter((message) => message.role === 'user'));
}

/** An overloaded answer (HTTP 529, overloaded_error), as the Messages API gives it. */
export const kOverloaded: MessagesReply = { kind: 'http-error', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };

/** A rate limit (HTTP 429, rate_limit_error) with a retry-after of `seconds`. */
export function rateLimited(seconds = 1): MessagesReply {
  return { kind: 'http-error', status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, headers: { 'retry-after': String(seconds) } };
}
