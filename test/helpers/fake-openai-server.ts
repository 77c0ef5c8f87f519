import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the fake server does with a request, chosen by an `x-fake-behaviour` header or by a
 * `[[fake:<name>]]` marker anywhere in the messages (tests put it in the task description).
 */
export type FakeBehaviour =
  /** A role-appropriate result (the role read from the prompt's `Role: <role>` line). */
  | 'ok'
  /** The same result wrapped in a markdown code fence, as local models like to do. */
  | 'fenced'
  /** The result without usage figures. */
  | 'no-usage'
  /** HTTP 429 with `Retry-After: 1`. */
  | 'rate-limit'
  /** HTTP 429 with `retry-after-ms: 1500` (OpenAI's own header). */
  | 'rate-limit-ms'
  /** HTTP 429 with `Retry-After` as an HTTP date. */
  | 'rate-limit-date'
  /** HTTP 429 insufficient_quota: retrying cannot help. */
  | 'quota'
  /** HTTP 500. */
  | 'server-error'
  /** HTTP 503 with a plain-text body. */
  | 'unavailable'
  /** HTTP 400 with an OpenAI-style error body. */
  | 'bad-request'
  /** HTTP 401 whose message echoes the key it was sent, as careless servers do. */
  | 'unauthorized'
  /** Prose instead of JSON, then a valid result once the request carries a repair. */
  | 'invalid-then-valid'
  /** JSON that breaks the result schema, then a valid result on repair. */
  | 'schema-then-valid'
  /** The role's result without gc_signal and severity_summary, then the full one on repair. */
  | 'no-signal-then-valid'
  /** The role's result with severity counts written loosely and a lower-case signal. */
  | 'loose-severity'
  /** Prose every time. */
  | 'always-invalid'
  /** A refusal instead of content. */
  | 'refusal'
  /** A valid result after `slowMs` (never, with `'never'`); a client that gives up first just goes away. */
  | 'slow'
  /** The socket is destroyed without an answer: a network error. */
  | 'hang-up'
  /** `{}` every time: what a grammar without `required` let a small model answer. */
  | 'empty-object'
  /** `{}`, then the role's result once the request carries a repair. */
  | 'empty-then-valid'
  /** Only an error, every time. */
  | 'only-error'
  /** `status: failed` with an error and no findings, every time. */
  | 'failed-no-findings'
  /** `status: failed` with the reason in its findings and no error, every time: what the contract asks of a model that cannot do the task. */
  | 'failed-with-reason'
  /** The role's result without gc_signal and severity_summary, every time. */
  | 'no-signal'
  /** The role's result with an evaluation score of 14 out of 10, every time. */
  | 'score-out-of-range'
  /** The role's result with `supervision_verdict: "block"` and a score, whatever the role. */
  | 'block'
  /** Prose with usage, then a repair request that never gets an answer (only a timeout ends it). */
  | 'invalid-then-slow'
  /** The first time a task is seen: prose, then HTTP 500 to the repair; every later request of it: a valid result. */
  | 'repair-fails-once';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: ChatRequest;
  /** The body as it came, byte for byte. */
  raw: string;
}

export interface ChatRequest {
  model?: string;
  messages?: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema?: Record<string, unknown> } };
  max_tokens?: number;
  max_completion_tokens?: number;
  [key: string]: unknown;
}

export interface FakeOpenAiServer {
  /** `http://127.0.0.1:<port>/v1`, ready for the SDK's baseURL. */
  baseUrl: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** The user prompt (first user message) of every chat request, in order. */
  prompts(): string[];
  close(): Promise<void>;
}

export interface FakeOpenAiServerOptions {
  /**
   * How long the `slow` behaviour waits before answering; `'never'` holds the request until
   * the client goes away, so that only its own timeout or abort can end the call.
   * @default 10000
   */
  slowMs?: number | 'never';
  /** Tokens reported per answer. @default {prompt_tokens: 120, completion_tokens: 30} */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Prompt tokens reported as served from the cache (`prompt_tokens_details.cached_tokens`). @default none */
  cachedTokens?: number;
  /**
   * A context window in tokens, a token being `charsPerToken` characters of the messages:
   * prompt_tokens is then counted from the messages, and a request over the window gets
   * HTTP 400 in the words of `contextStyle`'s server (llama.cpp's, with n_ctx and
   * n_prompt_tokens, or OpenAI's). @default none: every prompt fits, usage is `usage`
   */
  contextTokens?: number;
  /** @default 4 */
  charsPerToken?: number;
  /** Counts a message's tokens instead of `charsPerToken`, so that some text tokenizes denser than other. @default none */
  countTokens?: (text: string) => number;
  /** @default 'llama' */
  contextStyle?: 'llama' | 'openai';
  /** Request fields the server refuses with HTTP 400 naming them (as OpenAI refuses max_tokens for reasoning models). @default none */
  refuseParams?: string[];
}

const kBehaviours = new Set<FakeBehaviour>([
  'ok', 'fenced', 'no-usage', 'rate-limit', 'rate-limit-ms', 'rate-limit-date', 'quota', 'server-error', 'unavailable',
  'bad-request', 'unauthorized', 'invalid-then-valid', 'schema-then-valid', 'no-signal-then-valid', 'loose-severity', 'always-invalid',
  'refusal', 'slow', 'hang-up',
  'empty-object', 'empty-then-valid', 'only-error', 'failed-no-findings', 'failed-with-reason', 'no-signal', 'score-out-of-range', 'block',
  'invalid-then-slow', 'repair-fails-once',
]);

/** A scripted OpenAI-compatible chat endpoint on 127.0.0.1 and a random port. */
export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const slowMs = options.slowMs ?? 10_000;
  const fixedUsage = options.usage ?? { prompt_tokens: 120, completion_tokens: 30 };
  const charsPerToken = options.charsPerToken ?? 4;
  const seenTasks = new Set<string>();
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let answers = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ChatRequest;
      try {
        body = JSON.parse(raw) as ChatRequest;
      } catch {
        sendJson(res, 400, { error: { message: 'Body is not JSON', type: 'invalid_request_error' } });
        return;
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `No route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
        return;
      }
      handleChat(req, res, body);
    });
  });

  function handleChat(req: IncomingMessage, res: ServerResponse, body: ChatRequest): void {
    const messages = body.messages ?? [];
    const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
    const isRepair = messages.some((message) => message.role === 'assistant');
    const behaviour = chooseBehaviour(req.headers, messages);
    const role = /^Role: *(\S+)/m.exec(prompt)?.[1] ?? '';
    const id = /^Task: *(\S+)/m.exec(prompt)?.[1] ?? 'TASK-001';
    const refused = (options.refuseParams ?? []).find((name) => Object.hasOwn(body, name));
    if (refused !== undefined) {
      const message = `Unsupported parameter: '${refused}' is not supported with this model.`;
      return sendJson(res, 400, { error: { message, type: 'invalid_request_error', param: refused, code: 'unsupported_parameter' } });
    }
    const promptTokens = options.countTokens
      ? messages.reduce((sum, message) => sum + options.countTokens!(message.content), 0)
      : Math.ceil(messages.reduce((sum, message) => sum + message.content.length, 0) / charsPerToken);
    if (options.contextTokens !== undefined && promptTokens > options.contextTokens) {
      return options.contextStyle === 'openai'
        ? sendJson(res, 400, {
            error: {
              message: `This model's maximum context length is ${options.contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
              type: 'invalid_request_error',
              param: 'messages',
              code: 'context_length_exceeded',
            },
          })
        : sendJson(res, 400, {
            error: {
              code: 400,
              message: 'the request exceeds the available context size, try increasing it',
              type: 'exceed_context_size_error',
              n_prompt_tokens: promptTokens,
              n_ctx: options.contextTokens,
            },
          });
    }
    const usage = {
      ...(options.contextTokens === undefined ? fixedUsage : { ...fixedUsage, prompt_tokens: promptTokens }),
      ...(options.cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: options.cachedTokens } }),
    };
    const answer = (content: string | null, extra: { refusal?: string; withUsage?: boolean } = {}) =>
      sendJson(res, 200, completion(content, body.model ?? 'fake', ++answers, extra.withUsage === false ? undefined : usage, extra.refusal));
    const good = () => JSON.stringify(roleResult(role, id));

    switch (behaviour) {
      case 'ok':
        return answer(good());
      case 'fenced':
        return answer(`\`\`\`json\n${good()}\n\`\`\``);
      case 'no-usage':
        return answer(good(), { withUsage: false });
      case 'rate-limit':
        return sendJson(res, 429, { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '1' });
      case 'rate-limit-ms':
        return sendJson(res, 429, { error: { message: 'Rate limit reached for tokens', type: 'tokens', code: 'rate_limit_exceeded' } }, { 'retry-after-ms': '1500', 'retry-after': '2' });
      case 'rate-limit-date':
        return sendJson(res, 429, { error: { message: 'Slow down', type: 'requests' } }, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
      case 'quota':
        return sendJson(res, 429, { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } });
      case 'server-error':
        return sendJson(res, 500, { error: { message: 'The server had an error while processing your request', type: 'server_error' } });
      case 'unavailable':
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('upstream overloaded');
        return;
      case 'bad-request':
        return sendJson(res, 400, { error: { message: "Invalid value for 'model': no such model", type: 'invalid_request_error', param: 'model' } });
      case 'unauthorized': {
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        return sendJson(res, 401, { error: { message: `Incorrect API key provided: ${token}.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      case 'invalid-then-valid':
        return answer(isRepair ? good() : 'Sure! Here are my ideas: 1. a gateway 2. a cache');
      case 'schema-then-valid':
        return answer(isRepair ? good() : JSON.stringify({ status: 'done', findings: 42, colour: 'blue' }));
      case 'no-signal-then-valid': {
        if (isRepair) return answer(good());
        const { gc_signal: _signal, severity_summary: _summary, ...rest } = roleResult(role, id);
        return answer(JSON.stringify(rest));
      }
      case 'loose-severity':
        return answer(JSON.stringify({ ...roleResult(role, id), gc_signal: 'revision_needed', severity_summary: 'high=1, critical: 0, Low:1 medium:0' }));
      case 'always-invalid':
        return answer('I cannot produce JSON today, sorry.');
      case 'refusal':
        return answer(null, { refusal: 'I will not help with that.' });
      case 'slow': {
        if (slowMs === 'never') return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer(good());
        }, slowMs);
        timers.add(timer);
        res.on('close', () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
        return;
      }
      case 'hang-up':
        req.socket.destroy();
        return;
      case 'empty-object':
        return answer('{}');
      case 'empty-then-valid':
        return answer(isRepair ? good() : '{}');
      case 'only-error':
        return answer(JSON.stringify({ error: 'I could not do this task' }));
      case 'failed-no-findings':
        return answer(JSON.stringify({ status: 'failed', error: 'I could not do this task' }));
      case 'failed-with-reason':
        return answer(JSON.stringify({ status: 'failed', findings: 'Tried the three sources;\n none of them has dates for 2024, so no trend can be given' }));
      case 'no-signal': {
        const { gc_signal: _signal, severity_summary: _summary, ...rest } = roleResult(role, id);
        return answer(JSON.stringify(rest));
      }
      case 'score-out-of-range': {
        const result = roleResult(role, id) as { discoveries?: { data: { scores?: Record<string, number> } }[] };
        for (const discovery of result.discoveries ?? []) if (discovery.data.scores) discovery.data.scores.feasibility = 14;
        return answer(JSON.stringify(result));
      }
      case 'block':
        return answer(JSON.stringify({ ...roleResult(role, id), supervision_verdict: 'block', supervision_score: 0.1 }));
      case 'invalid-then-slow':
        // The repair is held until the client goes away.
        if (!isRepair) answer('Sure! Here are my ideas: 1. a gateway');
        return;
      case 'repair-fails-once': {
        if (seenTasks.has(id) && !isRepair) return answer(good());
        if (!isRepair) {
          seenTasks.add(id);
          return answer('Sure! Here are my ideas: 1. a gateway');
        }
        return sendJson(res, 500, { error: { message: 'The server had an error while processing your request', type: 'server_error' } });
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    prompts: () =>
      requests.map((request) => request.body.messages?.find((message) => message.role === 'user')?.content ?? ''),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chooseBehaviour(headers: IncomingHttpHeaders, messages: readonly { content: string }[]): FakeBehaviour {
  const header = headers['x-fake-behaviour'];
  if (typeof header === 'string' && kBehaviours.has(header as FakeBehaviour)) return header as FakeBehaviour;
  for (const message of messages) {
    const marked = /\[\[fake:([a-z-]+)\]\]/.exec(typeof message.content === 'string' ? message.content : '')?.[1];
    if (marked !== undefined && kBehaviours.has(marked as FakeBehaviour)) return marked as FakeBehaviour;
  }
  return 'ok';
}

/** What each role of the brainstorm and analyze pipelines would answer. */
export function roleResult(role: string, id: string): Record<string, unknown> {
  const base = { id, status: 'completed', verification: 'self-validated' };
  switch (role) {
    case 'ideator':
      return {
        ...base,
        findings: 'Generated 2 ideas for the Technical angle. Strongest: API gateway.',
        discoveries: [
          { type: 'idea', data: { title: 'API Gateway', angle: 'Technical', description: 'One entry point.', assumption: 'Many services', impact: 'Simpler clients' } },
          { type: 'idea', data: { title: 'Event Sourcing', angle: 'Technical', description: 'Keep every change.', assumption: 'State is hard to trace', impact: 'Full audit trail' } },
        ],
        artifacts: [{ name: 'ideas', content: '# Ideas\n\n- API Gateway\n- Event Sourcing\n' }],
        key_findings: ['API Gateway', 'Event Sourcing'],
      };
    case 'challenger':
      return {
        ...base,
        findings: 'Challenged 2 ideas: 1 HIGH, 1 LOW.',
        gc_signal: 'REVISION_NEEDED',
        severity_summary: 'CRITICAL:0 HIGH:1 MEDIUM:0 LOW:1',
        discoveries: [
          { type: 'critique', data: { idea_title: 'API Gateway', dimension: 'risk', severity: 'HIGH', challenge: 'Single point of failure', rationale: 'Needs HA' } },
          { type: 'critique', data: { idea_title: 'Event Sourcing', dimension: 'feasibility', severity: 'LOW', challenge: 'Learning curve', rationale: 'Training' } },
        ],
      };
    case 'synthesizer':
      return {
        ...base,
        findings: 'One theme, one proposal: resilient edge.',
        discoveries: [
          { type: 'theme', data: { name: 'Resilient edge', strength: 8, supporting_ideas: ['API Gateway'] } },
          { type: 'proposal', data: { title: 'HA gateway', source_ideas: ['API Gateway'], feasibility: 7, innovation: 5, description: 'A gateway pair.' } },
        ],
        decisions: ['Dropped nothing: both ideas survive'],
      };
    case 'evaluator':
      return {
        ...base,
        findings: 'HA gateway ranks first (6.6): pursue.',
        discoveries: [
          {
            type: 'evaluation',
            data: { proposal_title: 'HA gateway', scores: { feasibility: 8, innovation: 5, impact: 7, cost: 6 }, weighted_score: 6.6, rank: 1, recommendation: 'pursue' },
          },
        ],
        decisions: ['Pursue HA gateway: best feasibility'],
      };
    case 'explorer':
      return { ...base, findings: 'Mapped 1 area.', discoveries: [{ type: 'exploration', data: { title: 'Landscape', dimension: 'market', summary: 'Crowded.', sources: [] } }] };
    case 'analyst':
      return { ...base, findings: '1 insight.', discoveries: [{ type: 'insight', data: { title: 'Lock-in', perspective: 'cost', evidence: 'Pricing', confidence: 'medium' } }] };
    case 'discussant':
      return { ...base, findings: 'Confirmed 1 point.', discoveries: [{ type: 'discussion_point', data: { title: 'Lock-in', kind: 'confirmed', detail: 'Agreed' } }] };
    case 'supervisor':
      return { ...base, findings: 'Checked the work upstream: fit to build on.', supervision_verdict: 'pass', supervision_score: 0.9 };
    default:
      return { ...base, findings: `Did the ${role || 'generic'} task.` };
  }
}

function completion(
  content: string | null,
  model: string,
  n: number,
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } } | undefined,
  refusal: string | undefined,
): Record<string, unknown> {
  return {
    id: `chatcmpl-fake-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: refusal ?? null }, finish_reason: 'stop', logprobs: null }],
    ...(usage === undefined ? {} : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
