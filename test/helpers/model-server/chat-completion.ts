import { basename } from 'node:path';
import { LlamaCompletion, type GbnfJsonSchema, type LlamaContextSequence, type LlamaGrammar } from 'node-llama-cpp';
import { readMessages, renderChat, taskOf } from './chat-prompt.js';
import { grammarSchema } from './grammar-schema.js';
import type { HoldGate } from './hold-gate.js';
import type { ModelServerLog } from './server-log.js';
import type { SequencePool } from './sequence-pool.js';
import type { TestModel } from './test-model.js';

/** One chat completion's answer: an HTTP status and its JSON body. */
export interface CompletionReply {
  status: number;
  body: unknown;
}

/** Runs one chat completion; rejects only when `signal` aborts it (the client went away). */
export type CompleteFn = (body: unknown, signal: AbortSignal) => Promise<CompletionReply>;

export interface CompletionSettings {
  /** Tokens of one sequence: a prompt of this many tokens or more is refused, as llama.cpp refuses it. */
  contextSize: number;
  /** Tokens of an answer when the request names no limit (llama-server's `--n-predict`); undefined: until the context is full. */
  defaultMaxTokens: number | undefined;
}

interface ChatRequest {
  model?: unknown;
  messages?: unknown;
  response_format?: { type?: unknown; json_schema?: { schema?: unknown } };
  max_completion_tokens?: unknown;
  max_tokens?: unknown;
  temperature?: unknown;
}

/**
 * The chat completions endpoint over the real model: the messages become one prompt
 * (chat-prompt.ts), `response_format` becomes the grammar, `max_completion_tokens` (or
 * `max_tokens`) caps the answer, and `usage` counts the tokens the model read and wrote.
 */
export class ChatCompletions {
  readonly #grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(
    private readonly model: TestModel,
    private readonly pool: SequencePool,
    private readonly gate: HoldGate,
    private readonly log: ModelServerLog,
    private readonly settings: CompletionSettings,
  ) {}

  readonly complete: CompleteFn = async (value, signal) => {
    const arrived = performance.now();
    const request = (value !== null && typeof value === 'object' ? value : {}) as ChatRequest;
    const messages = readMessages(request.messages);
    const record = this.log.start(typeof messages === 'string' ? undefined : taskOf(messages), typeof messages !== 'string' && messages.some((message) => message.role === 'assistant'), arrived);
    const answer = (status: number, body: unknown, update: Parameters<ModelServerLog['finish']>[1] = {}): CompletionReply => {
      this.log.finish(record, { status, totalMs: performance.now() - arrived, ...update });
      return { status, body };
    };
    const refuse = (message: string, extra: Record<string, unknown> = {}, type = 'invalid_request_error') =>
      answer(400, { error: { code: 400, message, type, ...extra } }, { error: message });

    if (typeof messages === 'string') return refuse(messages);
    const maxTokens = readMaxTokens(request);
    if (typeof maxTokens === 'string') return refuse(maxTokens);
    if (maxTokens !== undefined) record.limit = maxTokens;
    let grammar: LlamaGrammar | undefined;
    try {
      grammar = await this.#grammar(request.response_format);
    } catch (error) {
      return refuse(`response_format: ${error instanceof Error ? error.message : String(error)}`);
    }
    const tokens = this.model.model.tokenize(renderChat(messages));
    const contextSize = this.settings.contextSize;
    if (tokens.length >= contextSize) {
      // llama.cpp's own answer, word for word, so a client learns the window from it.
      return refuse('the request exceeds the available context size, try increasing it', { n_prompt_tokens: tokens.length, n_ctx: contextSize }, 'exceed_context_size_error');
    }

    let sequence: LlamaContextSequence;
    try {
      await this.gate.pass(record.n, signal);
      sequence = await this.pool.acquire(tokens, signal);
    } catch (error) {
      this.log.finish(record, { aborted: 'waiting', waitMs: performance.now() - arrived, totalMs: performance.now() - arrived });
      throw error;
    }
    const started = performance.now();
    const inputBefore = sequence.tokenMeter.usedInputTokens;
    const outputBefore = sequence.tokenMeter.usedOutputTokens;
    const generated = () => sequence.tokenMeter.usedOutputTokens - outputBefore;
    this.log.startGenerating();
    try {
      const limit = maxTokens ?? this.settings.defaultMaxTokens;
      const completion = new LlamaCompletion({ contextSequence: sequence });
      const result = await completion.generateCompletionWithMeta(tokens, {
        signal,
        // Stop at the end of the context (finish_reason length), as llama.cpp does, instead of forgetting the prompt's start.
        disableContextShift: true,
        temperature: typeof request.temperature === 'number' ? request.temperature : 0,
        ...(limit === undefined ? {} : { maxTokens: limit }),
        ...(grammar === undefined ? {} : { grammar }),
      });
      // The prompt's start the sequence still held from its last request was not evaluated again.
      const cached = tokens.length - (sequence.tokenMeter.usedInputTokens - inputBefore);
      const usage = { prompt_tokens: tokens.length, completion_tokens: generated(), cached_tokens: cached };
      const finishReason = result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
      const waited = { waitMs: started - arrived, generationMs: performance.now() - started };
      return answer(200, {
        id: `chatcmpl-${record.n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: typeof request.model === 'string' ? request.model : basename(this.model.path),
        choices: [{ index: 0, message: { role: 'assistant', content: result.response }, finish_reason: finishReason, logprobs: null }],
        usage: {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
          prompt_tokens_details: { cached_tokens: cached },
        },
      }, { usage, finishReason, ...waited });
    } catch (error) {
      const now = performance.now();
      if (!signal.aborted) {
        const message = `the model failed: ${error instanceof Error ? error.message : String(error)}`;
        return answer(500, { error: { code: 500, message, type: 'server_error' } }, { error: message, waitMs: started - arrived, generationMs: now - started });
      }
      this.log.finish(record, { aborted: 'generating', generatedBeforeAbort: generated(), waitMs: started - arrived, generationMs: now - started, totalMs: now - arrived });
      throw error;
    } finally {
      this.log.stopGenerating();
      this.pool.release(sequence);
    }
  };

  /** The grammar of a response_format, built once per distinct schema. */
  #grammar(format: ChatRequest['response_format']): Promise<LlamaGrammar | undefined> {
    if (format === undefined || format === null || format.type === 'text') return Promise.resolve(undefined);
    if (format.type === 'json_object') return this.#cached('json', () => this.model.llama.getGrammarFor('json'));
    if (format.type !== 'json_schema') return Promise.reject(new Error(`unknown type ${JSON.stringify(format.type)}`));
    const schema = grammarSchema(format.json_schema?.schema);
    return this.#cached(JSON.stringify(schema), () => this.model.llama.createGrammarForJsonSchema<GbnfJsonSchema>(schema));
  }

  #cached(key: string, make: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    let grammar = this.#grammars.get(key);
    if (grammar === undefined) {
      grammar = make();
      this.#grammars.set(key, grammar);
      grammar.catch(() => this.#grammars.delete(key));
    }
    return grammar;
  }
}

/** `max_completion_tokens`, else `max_tokens` (the older name llama.cpp also reads), or why it is wrong. */
function readMaxTokens(request: ChatRequest): number | undefined | string {
  const name = request.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const value = request[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return `'${name}' must be a positive integer, got ${JSON.stringify(value)}`;
  return value;
}
