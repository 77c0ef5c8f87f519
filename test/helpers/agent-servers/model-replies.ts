import { LlamaCompletion, type GbnfJsonSchema, type LlamaContext, type LlamaGrammar, type Token } from 'node-llama-cpp';
import { grammarSchema } from '../model-server/grammar-schema.js';
import { boundedSchema } from './bounded-schema.js';
import { SequencePool } from '../model-server/sequence-pool.js';
import type { TestModel } from '../model-server/test-model.js';
import type { RecordedRequest } from './common.js';
import type { MessagesReply, MessagesRequest } from './messages-server.js';
import type { ResponsesReply, ResponsesRequest } from './responses-server.js';

/**
 * The model mode of the scripted agent servers: a reply function (a `Script` of
 * responses-server.ts or messages-server.ts) whose answer the tiny real model writes, under a
 * grammar made from the schema the CLI sent (Responses: `text.format.schema`, what
 * `codex exec --output-schema` sends; Messages: the `StructuredOutput` tool's `input_schema`,
 * what `claude -p --json-schema` sends). The usage of each reply is the model's own count
 * of the tokens it read and wrote.
 *
 * What the model is asked is bounded, so that a turn costs milliseconds of CPU, not seconds,
 * on a loaded 2-core box: the CLIs send some 30,000 tokens (of this model's tokenizer) of
 * their own instructions and tools, which the model would evaluate for minutes. It reads
 * only the tail of the last user text of the request (csv-wave's prompt, or a repair
 * prompt, or a tool result), and writes at most `maxTokens` tokens, under a copy of the
 * schema whose strings are at most `maxStringLength` characters and arrays at most
 * `maxItems` items long: what a bounded answer is, it always ends before its token limit.
 * The answer's shape is the model's; what it says is noise. `narrow` lets a test hold the
 * model to more than the request's schema says.
 */
export interface ModelRepliesOptions {
  /** Prompt tokens the model reads: the tail of the request's last user text. @default 192 */
  promptTokens?: number;
  /** Tokens the model writes at most. @default 512 */
  maxTokens?: number;
  /** The longest string the grammar lets the model write (its `minLength` wins when longer). @default 24 */
  maxStringLength?: number;
  /** The most items of an array, and properties of a free-form object, the grammar allows. @default 1 */
  maxItems?: number;
  /**
   * Narrows the bounded grammar schema further (it gets a copy it may change): a test that
   * wants answers a pipeline's rules take (a `status` of completed, counts that agree) says so
   * here, and the model writes the rest. The result must stay a subset of the request's schema.
   * @default the request's schema as it is, bounded
   */
  narrow?: (schema: Record<string, unknown>) => Record<string, unknown>;
}

/** One answer the model wrote. */
export interface ModelTurn {
  /** The API of the request: Responses (codex) or Messages (claude). */
  api: 'responses' | 'messages';
  /** The csv-wave task of the request (the `Task: <id>` line of its user texts), if any. */
  task: string | undefined;
  /** Whether the answer was written under a grammar (the request had a schema). */
  schema: boolean;
  /** Tokens the model read: the prompt it continued. */
  prompt_tokens: number;
  /** Of them, tokens its sequence still held from its previous request (not evaluated again). */
  cached_tokens: number;
  /** Tokens the model wrote. */
  completion_tokens: number;
  /** What it wrote. */
  text: string;
  /** node-llama-cpp's reason to stop: `eogToken` (the grammar's end), `maxTokens`... */
  stopReason: string;
  /** Time inside the model, ms. */
  generationMs: number;
}

export interface ModelReplies {
  /** The reply function of startResponsesServer: an output message holding the model's text. */
  responses: (request: RecordedRequest) => Promise<ResponsesReply>;
  /** The reply function of startMessagesServer: a StructuredOutput call, or a text after a tool result the CLI accepted. */
  messages: (request: RecordedRequest) => Promise<MessagesReply>;
  /** Every answer so far, in the order they were written. */
  turns: ModelTurn[];
  /** Waits for the answers being written, then frees the model's context (the model stays loaded). */
  close(): Promise<void>;
}

const kStructuredOutputTool = 'StructuredOutput';

/** Starts the model mode on a loaded model: one context of one sequence, one thread. */
export async function modelReplies(model: TestModel, options: ModelRepliesOptions = {}): Promise<ModelReplies> {
  const promptTokens = options.promptTokens ?? 192;
  const maxTokens = options.maxTokens ?? 512;
  const bounds = { maxStringLength: options.maxStringLength ?? 24, maxItems: options.maxItems ?? 1 };
  const context: LlamaContext = await model.model.createContext({
    // node-llama-cpp makes it 512 at least; a prompt and its answer fit.
    contextSize: promptTokens + maxTokens + 64,
    sequences: 1,
    // More threads stall generation on a loaded 2-core machine; one answers in milliseconds.
    threads: 1,
  });
  const pool = new SequencePool(context);
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const turns: ModelTurn[] = [];
  const running = new Set<Promise<unknown>>();

  const grammarFor = (schema: unknown): Promise<LlamaGrammar> => {
    const copy = boundedSchema(grammarSchema(schema), bounds) as Record<string, unknown>;
    const bounded = options.narrow === undefined ? copy : options.narrow(structuredClone(copy));
    const key = JSON.stringify(bounded);
    let grammar = grammars.get(key);
    if (grammar === undefined) {
      grammar = model.llama.createGrammarForJsonSchema<GbnfJsonSchema>(bounded as GbnfJsonSchema);
      grammars.set(key, grammar);
    }
    return grammar;
  };

  /** The model's answer to `text` (its tail), under the schema's grammar when there is one. */
  const generate = async (api: ModelTurn['api'], texts: readonly string[], schema: unknown): Promise<ModelTurn> => {
    const grammar = schema === undefined ? undefined : await grammarFor(schema);
    const tokens = promptOf(model, texts.at(-1) ?? '', promptTokens);
    const controller = new AbortController();
    const sequence = await pool.acquire(tokens, controller.signal);
    const started = performance.now();
    const inputBefore = sequence.tokenMeter.usedInputTokens;
    const outputBefore = sequence.tokenMeter.usedOutputTokens;
    try {
      const completion = new LlamaCompletion({ contextSequence: sequence });
      const result = await completion.generateCompletionWithMeta(tokens, {
        maxTokens,
        temperature: 0,
        disableContextShift: true,
        ...(grammar === undefined ? {} : { grammar }),
      });
      const evaluated = sequence.tokenMeter.usedInputTokens - inputBefore;
      const turn: ModelTurn = {
        api,
        task: taskOf(texts),
        schema: grammar !== undefined,
        prompt_tokens: tokens.length,
        cached_tokens: Math.max(0, tokens.length - evaluated),
        completion_tokens: sequence.tokenMeter.usedOutputTokens - outputBefore,
        text: result.response,
        stopReason: result.metadata.stopReason,
        generationMs: performance.now() - started,
      };
      turns.push(turn);
      return turn;
    } finally {
      pool.release(sequence);
    }
  };

  const track = <T>(promise: Promise<T>): Promise<T> => {
    running.add(promise);
    void promise.finally(() => running.delete(promise)).catch(() => {});
    return promise;
  };

  return {
    turns,
    responses: (request) =>
      track(
        (async (): Promise<ResponsesReply> => {
          const body = (request.body ?? {}) as ResponsesRequest;
          const format = body.text?.format;
          const turn = await generate('responses', responsesUserTexts(body), format?.type === 'json_schema' ? (format.schema ?? {}) : undefined);
          return {
            kind: 'text',
            text: turn.text,
            usage: { input_tokens: turn.prompt_tokens, cached_input_tokens: turn.cached_tokens, output_tokens: turn.completion_tokens, reasoning_output_tokens: 0 },
          };
        })(),
      ),
    messages: (request) =>
      track(
        (async (): Promise<MessagesReply> => {
          const body = (request.body ?? {}) as MessagesRequest;
          const tool = body.tools?.find((candidate) => candidate.name === kStructuredOutputTool);
          const last = body.messages?.at(-1);
          const results = toolResults(last?.content);
          // The CLI took the answer and still asks (it does not today): a short text ends the turn.
          const accepted = results.length > 0 && results.every((result) => result.is_error !== true);
          const wantsAnswer = tool !== undefined && !accepted;
          const turn = await generate('messages', messagesUserTexts(body), wantsAnswer ? (tool.input_schema ?? {}) : undefined);
          // Anthropic's input_tokens leaves out the tokens read from the cache.
          const usage = { input_tokens: turn.prompt_tokens - turn.cached_tokens, output_tokens: turn.completion_tokens, cache_read_input_tokens: turn.cached_tokens, cache_creation_input_tokens: 0 };
          const input = wantsAnswer ? parseObject(turn.text) : undefined;
          // An answer cut off at the token limit is no tool call: the model's text goes back as it is.
          if (input === undefined) return { kind: 'text', text: turn.text, usage };
          return { kind: 'tool', name: kStructuredOutputTool, input, usage };
        })(),
      ),
    close: async () => {
      await Promise.allSettled([...running]);
      await context.dispose();
    },
  };
}

/** The prompt the model continues: `user: <the text's last tokens>\nassistant: `. */
function promptOf(model: TestModel, text: string, limit: number): Token[] {
  const frame = model.model.tokenize('user: \nassistant: ').length;
  const tokens = model.model.tokenize(text);
  const tail = tokens.length + frame > limit ? model.model.detokenize(tokens.slice(tokens.length - Math.max(1, limit - frame))) : text;
  const prompt = model.model.tokenize(`user: ${tail}\nassistant: `);
  return prompt.length > limit ? prompt.slice(prompt.length - limit) : prompt;
}

/** The task of a request: the first `Task: <id>` line of its user texts (csv-wave's prompt). */
function taskOf(texts: readonly string[]): string | undefined {
  for (const text of texts) {
    const id = /^Task: *(\S+)/m.exec(text)?.[1];
    if (id !== undefined) return id;
  }
  return undefined;
}

/** The text of each user message of a Responses request's input, in order. */
function responsesUserTexts(body: ResponsesRequest): string[] {
  return (body.input ?? [])
    .filter((item) => item.role === 'user')
    .map((item) => (Array.isArray(item.content) ? item.content : []).map((part) => (typeof part.text === 'string' ? part.text : '')).join(''));
}

interface ToolResultBlock {
  type: 'tool_result';
  is_error?: boolean;
  content?: unknown;
}

/** The text of each user message of a Messages request: its text blocks and tool results. */
function messagesUserTexts(body: MessagesRequest): string[] {
  return (body.messages ?? []).filter((message) => message.role === 'user').map((message) => blockText(message.content));
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      if (!isRecord(block)) return '';
      if (block['type'] === 'text' && typeof block['text'] === 'string') return block['text'];
      if (block['type'] === 'tool_result') return blockText(block['content']);
      return '';
    })
    .join('\n');
}

function toolResults(content: unknown): ToolResultBlock[] {
  if (!Array.isArray(content)) return [];
  return content.filter((block): block is ToolResultBlock => isRecord(block) && block['type'] === 'tool_result');
}

/** The JSON object a text holds, or undefined (an answer cut off, or not an object). */
function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
