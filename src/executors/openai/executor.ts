import OpenAI from 'openai';
import { describe } from '../module.js';
import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput, TokenUsage } from '../types.js';
import { quoteAnswer } from './answer.js';
import { answerFormat, readContractAnswer } from './contract.js';
import { classifyCallError, type StoppedBy } from './errors.js';
import { kSystemPrompt, RolePrompts } from './prompt.js';

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
  /** Upper bound on the tokens of one answer. @default the server's */
  maxTokens?: number;
}

/** An attempt's outcome; it carries the tokens spent when the server reported them. */
export type OpenAiOutcome = AttemptOutcome;

/** Sent as the key to servers that need none: the SDK refuses to start without one. */
const kNoKey = 'not-needed';
/** Shorter keys are dummies (`x`, `none`) whose scrubbing would only mangle text. */
const kMinSecretLength = 8;
/** setTimeout's ceiling: how an attempt without --timeout tells the SDK "no timeout". */
const kNoTimeoutMs = 2 ** 31 - 1;

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * Runs a task as one chat completion of an OpenAI-compatible endpoint (DESIGN.md section 6):
 * the role's prompt template of the session's pipeline (prompt.ts), filled from the row and
 * the prompt context the engine sends with the request; the answer is asked for as JSON of
 * the role's model-answer contract (contract.ts). An answer that breaks it gets one repair
 * request. The SDK does not retry: the engine does, by error class (errors.ts).
 */
export class OpenAiExecutor implements Executor {
  readonly #client: OpenAI;
  readonly #model: string;
  readonly #maxTokensField: 'max_tokens' | 'max_completion_tokens';
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
    // OpenAI's own API wants the new name (reasoning models reject max_tokens); the servers
    // that imitate it (llama.cpp, vLLM, Ollama) all know the old one.
    this.#maxTokensField = isOpenAiHost(this.#client.baseURL) ? 'max_completion_tokens' : 'max_tokens';
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
    let prompt: string;
    try {
      prompt = this.#prompts.render(task, context);
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }

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
      { role: 'system', content: kSystemPrompt },
      { role: 'user', content: prompt },
    ];
    let usage: TokenUsage | undefined;
    const withUsage = (outcome: AttemptOutcome): OpenAiOutcome => (usage === undefined ? outcome : { ...outcome, usage });
    try {
      for (let request = 1; ; request++) {
        const completion = await this.#client.chat.completions.create(
          {
            model: this.#model,
            messages,
            response_format: answerFormat(context.pipeline, task.row.role ?? ''),
            ...(this.#maxTokens === undefined ? {} : { [this.#maxTokensField]: this.#maxTokens }),
          },
          {
            signal: controller.signal,
            maxRetries: 0,
            // Our own timer ends the attempt; the SDK's would otherwise end it after 10 minutes.
            timeout: options.timeoutMs > 0 ? Math.min(options.timeoutMs + 1000, kNoTimeoutMs) : kNoTimeoutMs,
          },
        );
        if (completion.usage) {
          usage = {
            prompt_tokens: (usage?.prompt_tokens ?? 0) + (completion.usage.prompt_tokens ?? 0),
            completion_tokens: (usage?.completion_tokens ?? 0) + (completion.usage.completion_tokens ?? 0),
          };
        }
        const choice = completion.choices?.[0];
        const refusal = choice?.message?.refusal;
        if (typeof refusal === 'string' && refusal !== '') {
          return withUsage({ kind: 'error', errorClass: 'task-failure', error: `The model refused the task: ${refusal}` });
        }
        const content = choice?.message?.content ?? '';
        const answer = readContractAnswer(content, choice?.finish_reason, context.pipeline, task.row.role ?? '');
        if (answer.ok) {
          const notes = answer.notes.length > 0 ? { notes: answer.notes } : {};
          return withUsage({ kind: 'result', result: { ...answer.result, id: task.id }, ...notes });
        }
        if (request >= 2) {
          return withUsage({
            kind: 'error',
            errorClass: 'invalid-output',
            error: `Invalid model answer after one repair request: ${answer.problem}${quoteAnswer(content)}`,
          });
        }
        messages.push(
          { role: 'assistant', content },
          {
            role: 'user',
            content: `Your answer could not be used: ${answer.problem}. Answer again with only the corrected JSON object for task ${task.id}, following the result schema and your role instructions.`,
          },
        );
      }
    } catch (error) {
      return withUsage(classifyCallError(error, { stoppedBy, timeoutMs: options.timeoutMs, baseUrl: this.#client.baseURL }));
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    }
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

function isOpenAiHost(url: string): boolean {
  try {
    return new URL(url).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
