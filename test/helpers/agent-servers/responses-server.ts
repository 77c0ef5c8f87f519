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
 * A scripted Responses-API server (POST /v1/responses, streamed), the API `codex exec`
 * speaks with `wire_api = "responses"`. Each request gets the script's next reply; a
 * script run out answers with an HTTP 500, so a test that asked for too few sees it.
 */

/** The usage a reply reports in its `response.completed` event. */
export interface ResponsesUsage {
  input_tokens: number;
  cached_input_tokens?: number;
  output_tokens: number;
  reasoning_output_tokens?: number;
}

export type ResponsesReply =
  /** An assistant message holding `text`, then `response.completed` with `usage`. */
  | { kind: 'text'; text: string; usage?: ResponsesUsage }
  /** A `response.failed` event with the error's message (and code). */
  | { kind: 'failed'; message: string; code?: string }
  | HttpErrorReply
  | HangReply;

export interface ResponsesServer extends LoopbackServer {
  /** `http://127.0.0.1:<port>/v1`: the provider's base_url. */
  baseUrl: string;
  /** The POST /v1/responses bodies, in order. */
  responseBodies(): ResponsesRequest[];
}

/** The parts of a Responses request the tests read. */
export interface ResponsesRequest {
  model?: string;
  instructions?: string;
  input?: Array<{ type?: string; role?: string; content?: Array<{ type?: string; text?: string }> }>;
  text?: { format?: { type?: string; name?: string; schema?: Record<string, unknown>; strict?: boolean } };
  stream?: boolean;
  [key: string]: unknown;
}

export const kDefaultResponsesUsage: ResponsesUsage = { input_tokens: 120, cached_input_tokens: 20, output_tokens: 30, reasoning_output_tokens: 5 };

const isResponses = (request: RecordedRequest) => request.method === 'POST' && /^\/v1\/responses(\?|$)/.test(request.url);

export async function startResponsesServer(script: Script<ResponsesReply>): Promise<ResponsesServer> {
  let index = 0;
  const hanging: ServerResponse[] = [];
  const server = await startLoopbackServer(
    async (request, response) => {
      if (!isResponses(request)) {
        if (request.method === 'GET' && request.url.startsWith('/v1/models')) return writeJson(response, 200, { object: 'list', data: [] });
        return writeJson(response, 404, { error: { message: `no route ${request.method} ${request.url}` } });
      }
      const reply = await nextReply(script, request, index++, { kind: 'http-error', status: 500, body: { error: { message: 'the script ran out' } } });
      if (reply.kind === 'hang') {
        hanging.push(response);
        return;
      }
      if (reply.kind === 'http-error') return writeJson(response, reply.status, reply.body, reply.headers);
      streamReply(response, reply, index);
    },
    isResponses,
  );
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    responseBodies: () => server.requests.filter(isResponses).map((request) => request.body as ResponsesRequest),
    close: async () => {
      for (const response of hanging) response.destroy();
      await server.close();
    },
  };
}

function streamReply(response: ServerResponse, reply: Extract<ResponsesReply, { kind: 'text' | 'failed' }>, index: number): void {
  const id = `resp_${index}`;
  startEvents(response);
  writeEvent(response, 'response.created', { type: 'response.created', response: { id, object: 'response', status: 'in_progress' } });
  if (reply.kind === 'failed') {
    writeEvent(response, 'response.failed', {
      type: 'response.failed',
      response: { id, object: 'response', status: 'failed', error: { code: reply.code ?? 'server_error', message: reply.message } },
    });
    response.end();
    return;
  }
  const item = { type: 'message', id: `msg_${index}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  writeEvent(response, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  writeEvent(response, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: reply.text });
  writeEvent(response, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  const usage = reply.usage ?? kDefaultResponsesUsage;
  writeEvent(response, 'response.completed', {
    type: 'response.completed',
    response: {
      id,
      object: 'response',
      status: 'completed',
      output: [item],
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: usage.reasoning_output_tokens ?? 0 },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    },
  });
  response.end();
}
