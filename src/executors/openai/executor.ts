import OpenAI, { APIError } from 'openai';
import { describe } from '../module.js';
import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput } from '../types.js';
import { sumUsage, type RequestUsage } from '../../knowledge/usage.js';
import { messageChars, requestUsage, unreported } from './request-usage.js';
import { invalidAfterRepair, judgeCompletion, maxTokensFieldsFor, repairMessages, type MaxTokensField } from './answer-turn.js';
import { answerFormat } from './contract.js';
import { contextRefusal, fitPrompt, TokenEstimate, type ContextRefusal, type FittedPrompt, type PromptParts } from './context-window.js';
import { classifyCallError, type StoppedBy } from './errors.js';
import { RolePrompts, systemPrompt } from './prompt.js';

export interface OpenAiExecutorOptions {
  /** The model name the server knows, e.g. `gpt-4o-mini` or a local model's name. */
  model: string;
  /** An OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8080/v1`. @default the SDK's (OPENAI_BASE_URL, else api.openai.com) */
  baseUrl?: string;
  /**
   * The API key. It is sent as the Authorization header and never written anywhere:
   * it is scrubbed (`***`) from every message and result this executor returns.
   * @default process.env.OPENAI_API_KEY, else a placeholder for local servers that need none
   */
  apiKey?: string;
  /**
   * A folder of prompt templates, `<pipeline>/<role>.md` and `generic/default.md`, looked at
   * before the built-in ones (a role found in neither falls back to a default template).
   * @default only the built-in prompts/ folder of the package
   */
  promptsDir?: string;
  /**
   * Upper bound on the tokens of one answer, sent as `max_tokens` to compatible servers and
   * `max_completion_tokens` to OpenAI's, switching names when a server refuses one. @default the server's
   */
  maxTokens?: number;
  /**
   * The model's context window in tokens: a prompt that would not fit has its digests and
   * prev_context cut. @default unknown until a server refuses a prompt as too long (its 400 tells the size)
   */
  contextWindow?: number;
}

/** An attempt's outcome; it carries the tokens spent when the server reported them. */
export type OpenAiOutcome = AttemptOutcome;

/** Sent as the key to servers that need none: the SDK refuses to start without one. */
const kNoKey = 'not-needed';
/** Shorter keys are dummies (`x`, `none`) whose scrubbing would only mangle text. */
const kMinSecretLength = 8;
/** setTimeout's ceiling: how an attempt without --timeout tells the SDK "no timeout". */
const kNoTimeoutMs = 2 ** 31 - 1;
/** Prompts fitted again after a server's "too long" 400 in one attempt; each 400 teaches a closer ratio. */
const kMaxRefits = 3;
/** The share of the room a refitted prompt leaves unused: the ratio learned from a 400 is the whole prompt's, and the text still cut may tokenize looser. */
const kRefitMargin = 0.1;
/** Tokens kept for a repair request's own words (what was wrong, and what to answer), besides the answer it sends back. */
const kRepairWordsTokens = 200;

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ResponseFormat = OpenAI.ResponseFormatJSONSchema;

/**
 * Runs a task as one chat completion of an OpenAI-compatible endpoint (DESIGN.md section 6):
 * the role's prompt template of the session's pipeline (prompt.ts), filled from the row and
 * the prompt context the engine sends with the request; the answer is asked for as JSON of
 * the result schema (answer.ts). An answer that is not a valid result gets one repair
 * request. The SDK does not retry: the engine does, by error class (errors.ts).
 */
export class OpenAiExecutor implements Executor {
  readonly #client: OpenAI;
  readonly #model: string;
  /** The names the answer's token limit is sent under; a name a server refuses is dropped. */
  #maxTokensFields: readonly MaxTokensField[];
  #contextWindow: number | undefined;
  readonly #estimate = new TokenEstimate();
  readonly #maxTokens: number | undefined;
  readonly #secret: string | undefined;
  readonly #prompts: RolePrompts;

  constructor(options: OpenAiExecutorOptions) {
    if (typeof options.model !== 'string' || options.model.trim() === '') {
      throw new TypeError(`Expected \`model\` to be a non-empty string, got \`${String(options.model)}\` (${typeof options.model})`);
    }
    if (options.maxTokens !== undefined && !(Number.isInteger(options.maxTokens) && options.maxTokens > 0)) {
      throw new TypeError(`Expected \`maxTokens\` to be a positive integer, got \`${options.maxTokens}\` (${typeof options.maxTokens})`);
    }
    if (options.contextWindow !== undefined && !(Number.isInteger(options.contextWindow) && options.contextWindow > 0)) {
      throw new TypeError(`Expected \`contextWindow\` to be a positive integer, got \`${options.contextWindow}\` (${typeof options.contextWindow})`);
    }
    this.#contextWindow = options.contextWindow;
    const key = options.apiKey ?? process.env.OPENAI_API_KEY;
    const hasKey = key !== undefined && key !== '';
    this.#secret = hasKey && key.length >= kMinSecretLength ? key : undefined;
    this.#model = options.model;
    this.#maxTokens = options.maxTokens;
    this.#prompts = new RolePrompts(options.promptsDir);
    this.#client = new OpenAI({
      apiKey: hasKey ? key : kNoKey,
      ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
      maxRetries: 0,
      // The SDK's debug log would print requests; nothing of ours goes to a log.
      logLevel: 'off',
    });
    this.#maxTokensFields = maxTokensFieldsFor(this.#client.baseURL);
  }

  async run(task: TaskInput, options: ExecutorRunOptions): Promise<OpenAiOutcome> {
    return this.#scrub(await this.#attempt(task, options));
  }

  async #attempt(task: TaskInput, options: ExecutorRunOptions): Promise<OpenAiOutcome> {
    if (options.signal.aborted) return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    const context = options.prompt;
    if (context === undefined) {
      return { kind: 'error', errorClass: 'task-failure', error: 'The openai executor needs the prompt context of the task (ExecutorRunOptions.prompt)' };
    }
    const render = (parts: PromptParts) =>
      this.#prompts.render({ ...task, prev_context: parts.prev_context }, { ...context, upstream: parts.upstream, discoveries: parts.discoveries, wisdom: parts.wisdom });
    const system = systemPrompt(context.pipeline);
    const parts: PromptParts = { upstream: context.upstream, discoveries: context.discoveries, wisdom: context.wisdom, prev_context: task.prev_context };
    let fitted: FittedPrompt;
    try {
      fitted = this.#fit(render, parts, system);
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }
    if (!fitted.ok) return this.#tooBig(fitted);

    const controller = new AbortController();
    let stoppedBy: StoppedBy;
    const onAbort = () => {
      stoppedBy ??= 'abort';
      controller.abort();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    const timer =
      options.timeoutMs > 0
        ? setTimeout(() => {
            stoppedBy ??= 'timeout';
            controller.abort();
          }, options.timeoutMs)
        : undefined;

    const messages: Message[] = [
      { role: 'system', content: system },
      { role: 'user', content: fitted.prompt },
    ];
    const notes = [...fitted.notes];
    const requests: RequestUsage[] = [];
    const withUsage = (outcome: AttemptOutcome): OpenAiOutcome => {
      const usage = sumUsage(requests);
      return {
        ...outcome,
        ...(usage === undefined ? {} : { usage }),
        ...(requests.length === 0 ? {} : { requests }),
        ...(notes.length === 0 ? {} : { notes }),
      };
    };
    const format = answerFormat(context.pipeline, task.row.role ?? '');
    let refits = 0;
    let request = 1;
    try {
      for (;;) {
        const kind = request === 1 ? 'first' : 'repair';
        let completion: OpenAI.Chat.Completions.ChatCompletion;
        try {
          completion = await this.#create(messages, format, controller.signal, options.timeoutMs);
        } catch (error) {
          const refusal = contextRefusal(error);
          // A window learned from the server's 400: the prompt is fitted again. The text cut may
          // tokenize looser than the text kept, so a refitted prompt can still be over: each 400
          // teaches the ratio of the prompt it refused, which is more and more the kept text's.
          if (refusal !== undefined && request === 1 && refits < kMaxRefits) {
            refits++;
            this.#learnWindow(refusal, messages);
            const again = this.#fit(render, parts, system, kRefitMargin);
            if (!again.ok) return withUsage(this.#tooBig(again));
            // Nothing learned (no token count, same window): the same prompt would be refused again.
            if (again.prompt === messages[1]?.content) throw error;
            messages[1] = { role: 'user', content: again.prompt };
            notes.splice(0, notes.length, ...again.notes);
            continue;
          }
          // A request cut off (a timeout, an abort, the connection lost: no HTTP status) may have
          // cost tokens the server never told; an HTTP error answer cost none.
          if (!(error instanceof APIError && typeof error.status === 'number')) requests.push(unreported(request, kind, this.#model));
          throw error;
        }
        // With the characters sent: estimate learns the server's characters per token from them.
        const used = { ...requestUsage(completion, request, kind, this.#model), prompt_chars: messageChars(messages) };
        requests.push(used);
        options.reportUsage?.(used);
        if (request === 1 && completion.usage?.prompt_tokens) {
          this.#estimate.learn(messageChars(messages), completion.usage.prompt_tokens);
        }
        const judged = judgeCompletion(completion, { id: task.id, role: task.row.role ?? '' }, context.pipeline);
        if (judged.kind === 'result') {
          notes.push(...judged.notes);
          return withUsage({ kind: 'result', result: judged.result });
        }
        if (judged.kind !== 'repair') return withUsage(judged);
        if (request >= 2) return withUsage(invalidAfterRepair(judged.content, judged.problem));
        request++;
        messages.push(...repairMessages(task.id, judged.content, judged.problem));
      }
    } catch (error) {
      return withUsage(classifyCallError(error, { stoppedBy, timeoutMs: options.timeoutMs, baseUrl: this.#client.baseURL }));
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * One chat completion. A server that refuses a name of the answer's token limit
   * (OpenAI's reasoning models refuse `max_tokens`, older servers `max_completion_tokens`)
   * is asked again at once without it (or, when it was the only one, with the other name);
   * the names kept serve the executor's later requests.
   */
  async #create(messages: Message[], format: ResponseFormat, signal: AbortSignal, timeoutMs: number): Promise<OpenAI.Chat.Completions.ChatCompletion> {
    for (let tries = 0; ; tries++) {
      const fields = this.#maxTokensFields;
      const limit = this.#maxTokens;
      try {
        return await this.#client.chat.completions.create(
          // The body is sent as JSON in this key order: what the tasks of a role share (the model,
          // the answer's schema, the limit, the system prompt and the start of the user prompt)
          // comes before the task's own text, as one prefix a provider's prompt cache can serve.
          {
            model: this.#model,
            response_format: format,
            ...(limit === undefined ? {} : Object.fromEntries(fields.map((field) => [field, limit]))),
            messages,
          },
          {
            signal,
            maxRetries: 0,
            // Our own timer ends the attempt; the SDK's would otherwise end it after 10 minutes.
            timeout: timeoutMs > 0 ? Math.min(timeoutMs + 1000, kNoTimeoutMs) : kNoTimeoutMs,
          },
        );
      } catch (error) {
        const refused = fields.find((field) => refusesParameter(error, field));
        if (tries > 0 || limit === undefined || refused === undefined) throw error;
        const kept = fields.filter((field) => field !== refused);
        this.#maxTokensFields = kept.length > 0 ? kept : [refused === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens'];
      }
    }
  }

  /**
   * The prompt as it fits the context window with room for one repair request, when a window
   * is known; as rendered otherwise.
   * `margin` (0 to 1): the share of the room left unused, once a server has refused a prompt:
   * the ratio learned from it is the whole prompt's, and the text still cut may tokenize looser.
   */
  #fit(render: (parts: PromptParts) => string, parts: PromptParts, system: string, margin = 0): FittedPrompt {
    const window = this.#contextWindow;
    if (window === undefined) return { ok: true, prompt: render(parts), notes: [] };
    // A repair request is the prompt, the answer sent back, the repair's words and room for the
    // new answer: a prompt fitted to the window alone would leave its repair refused as too long.
    const reserve = this.#answerReserve(window);
    const room = Math.max(0, window - reserve - reserve - kRepairWordsTokens);
    return fitPrompt(render, parts, system.length, Math.floor(room * (1 - margin)), this.#estimate);
  }

  /** Tokens kept free for the answer: --max-tokens, else a quarter of the window. */
  #answerReserve(window: number): number {
    return Math.min(this.#maxTokens ?? Math.floor(window / 4), Math.floor(window / 2));
  }

  #learnWindow(refusal: ContextRefusal, messages: readonly Message[]): void {
    this.#contextWindow = Math.min(refusal.contextTokens, this.#contextWindow ?? Infinity);
    if (refusal.promptTokens !== undefined) this.#estimate.learn(messageChars(messages), refusal.promptTokens);
  }

  #tooBig(fitted: Extract<FittedPrompt, { ok: false }>): OpenAiOutcome {
    const window = this.#contextWindow ?? 0;
    return {
      kind: 'error',
      errorClass: 'task-failure',
      error:
        `The task's own prompt does not fit the model's context window: about ${fitted.ownTokens} tokens ` +
        `(template, row, topic and system prompt, at ${this.#estimate.charsPerToken.toFixed(1)} characters a token) ` +
        `with every digest and prev_context left out, and ${fitted.roomTokens} tokens of a ${window}-token window are left ` +
        `after ${window - fitted.roomTokens} kept for the answer and one repair request. Shorten the task's text, or use a model with a larger context (--context-window).`,
    };
  }

  /** Replaces the key wherever it shows up: a server may echo it in an error message. */
  #scrub(outcome: OpenAiOutcome): OpenAiOutcome {
    const secret = this.#secret;
    if (secret === undefined) return outcome;
    const text = JSON.stringify(outcome);
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (!text.includes(escaped)) return outcome;
    return JSON.parse(text.split(escaped).join('***')) as OpenAiOutcome;
  }
}

/** A 400 that names the given parameter as one the server does not take. */
function refusesParameter(error: unknown, name: string): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const body = (error.error ?? {}) as { message?: unknown; param?: unknown };
  const message = typeof body.message === 'string' ? body.message : error.message;
  return body.param === name || message.includes(name);
}
