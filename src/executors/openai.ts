import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { z } from 'zod';
import type { UpstreamContext } from '../knowledge/upstream.js';
import { findPipeline } from '../pipelines/pipeline-for.js';
import { taskResultSchema, type TaskResult } from '../schema/result.js';
import { describe } from './module.js';
import type { AttemptOutcome, Executor, ExecutorRunOptions, TaskInput, TokenUsage } from './types.js';
import { sessionPathForRead } from '../knowledge/session-path.js';

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

/** The built-in templates: a top-level folder, so the same URL works from src/ and dist/. */
const kBuiltInPrompts = fileURLToPath(new URL('../../prompts/', import.meta.url));
/** Sent as the key to servers that need none: the SDK refuses to start without one. */
const kNoKey = 'not-needed';
/** Shorter keys are dummies (`x`, `none`) whose scrubbing would only mangle text. */
const kMinSecretLength = 8;
/** What `{discoveries}` shows of discoveries.ndjson: the newest lines, within a budget. */
const kDigestLines = 30;
const kDigestChars = 4000;
const kDigestTailBytes = 256 * 1024;
/** What `{upstream}` shows of the dependencies' artifacts. */
const kArtifactChars = 6000;
const kUpstreamChars = 16000;
/** What `{wisdom}` shows: the end of each file, where the newest entries are. */
const kWisdomFileChars = 1000;
const kWisdomChars = 3000;
/** Characters of a bad answer quoted in the error of an attempt that stays invalid. */
const kBadAnswerQuote = 200;
/** setTimeout's ceiling: how an attempt without --timeout tells the SDK "no timeout". */
const kNoTimeoutMs = 2 ** 31 - 1;
/** Names a pipeline or role may have to be used in a template path. */
const kPathNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The output contract, the same for every role; the role's template says what to put in it. */
const kSystemPrompt = `You are one worker in a csv-wave pipeline: a batch of tasks run in dependency waves. Your answer is stored as the result of your task and shown to the tasks that come after it.

Answer with exactly one JSON object and nothing else: no prose around it, no code fences. Its fields:
- "id": the task id you are given.
- "status": "completed", or "failed" when the task cannot be done; then say why in "error".
- "findings": the result in at most 500 characters. Later tasks see this first, so make it a summary that stands on its own.
- "artifacts": optional list of objects with "name" (letters, digits, ".", "-", "_"; at most 64 characters, no extension needed) and "content" (markdown): the full output. Use them for anything longer than the findings.
- "discoveries": optional list of objects with "type" and "data" (an object): facts shared with every later task. Use the types and data fields your role instructions name.
- "key_findings": optional, at most 5 strings of under 100 characters each.
- "decisions": optional list of decisions, each with its reason.
- "wisdom": optional object with lists "learnings", "decisions", "conventions", "issues": lessons later tasks should know.
- "verification": optional, "self-validated".
- "gc_signal" and "severity_summary": only when your role instructions ask for them.
No other fields.`;

type ResponseFormat = OpenAI.ResponseFormatJSONSchema;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

let responseFormat: ResponseFormat | undefined;

/** The result's JSON Schema as the request's response_format (built once). */
function taskResultFormat(): ResponseFormat {
  responseFormat ??= {
    type: 'json_schema',
    json_schema: {
      name: 'task_result',
      strict: false,
      schema: pruneSchema(z.toJSONSchema(taskResultSchema, { io: 'input', unrepresentable: 'any' })) as Record<string, unknown>,
    },
  };
  return responseFormat;
}

/** Drops keywords some OpenAI-compatible servers reject or cannot turn into a grammar. */
function pruneSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruneSchema);
  if (value === null || typeof value !== 'object') return value;
  const pruned: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$schema' || key === 'propertyNames') continue;
    pruned[key] = pruneSchema(inner);
  }
  return pruned;
}

interface SessionInfo {
  pipeline: string;
  topic: string;
}

type Answer = { ok: true; result: TaskResult } | { ok: false; problem: string };

/**
 * Runs a task as one chat completion of an OpenAI-compatible endpoint (DESIGN.md section 6):
 * the role's prompt template of the session's pipeline, filled with the row, prev_context,
 * the topic, the dependencies' outputs and a digest of the discoveries board; the answer is
 * asked for as JSON of the result schema. An answer that is not a valid result gets one
 * repair request. The SDK does not retry: the engine does, by error class.
 */
export class OpenAiExecutor implements Executor {
  readonly #client: OpenAI;
  readonly #model: string;
  readonly #maxTokensField: 'max_tokens' | 'max_completion_tokens';
  readonly #maxTokens: number | undefined;
  readonly #secret: string | undefined;
  readonly #promptRoots: readonly string[];
  readonly #templates = new Map<string, string | null>();
  readonly #sessions = new Map<string, SessionInfo>();

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
    this.#promptRoots = [...(options.promptsDir === undefined ? [] : [resolve(options.promptsDir)]), kBuiltInPrompts];
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
    let prompt: string;
    let session: SessionInfo;
    try {
      session = this.#sessionInfo(task.session);
      prompt = this.#prompt(task, session);
    } catch (error) {
      return { kind: 'error', errorClass: 'task-failure', error: describe(error) };
    }

    const controller = new AbortController();
    let stoppedBy: 'timeout' | 'abort' | undefined;
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
            response_format: taskResultFormat(),
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
        const answer = readAnswer(content, choice?.finish_reason, session.pipeline, task.row.role ?? '');
        if (answer.ok) return withUsage({ kind: 'result', result: { ...answer.result, id: task.id } });
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
      return withUsage(this.#classify(error, stoppedBy, options.timeoutMs));
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
    }
  }

  #classify(error: unknown, stoppedBy: 'timeout' | 'abort' | undefined, timeoutMs: number): AttemptOutcome {
    if (stoppedBy === 'timeout' || error instanceof APIConnectionTimeoutError) {
      return { kind: 'error', errorClass: 'timeout', error: `Timed out after ${timeoutMs / 1000}s waiting for the model` };
    }
    if (stoppedBy === 'abort') return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
    if (error instanceof APIConnectionError) {
      return { kind: 'error', errorClass: 'transient', error: `Cannot reach the model server at ${safeUrl(this.#client.baseURL)}: ${causeText(error)}` };
    }
    if (error instanceof APIError && typeof error.status === 'number') {
      const status = error.status;
      const message = serverMessage(error);
      if (status === 429 && error.code !== 'insufficient_quota') {
        const retryAfterMs = parseRetryAfter(error.headers);
        return {
          kind: 'error',
          errorClass: 'rate-limited',
          error: `Rate limited by the model server (HTTP 429): ${message}`,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      }
      // 408 and 409 are the two 4xx answers that say "try again" (the SDK retries them too).
      if (status >= 500 || status === 408 || status === 409) {
        return { kind: 'error', errorClass: 'transient', error: `The model server failed (HTTP ${status}): ${message}` };
      }
      return { kind: 'error', errorClass: 'task-failure', error: `The model server refused the request (HTTP ${status}): ${message}` };
    }
    return { kind: 'error', errorClass: 'task-failure', error: `The model call failed: ${describe(error)}` };
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

  #sessionInfo(session: string): SessionInfo {
    const cached = this.#sessions.get(session);
    if (cached) return cached;
    // The engine validated session.json where it entered; only two fields matter here.
    let raw: unknown = {};
    const path = join(session, 'session.json');
    if (existsSync(path)) {
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch (error) {
        throw new Error(`Cannot read ${path}: ${describe(error)}`, { cause: error });
      }
    }
    const fields = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const info: SessionInfo = {
      pipeline: typeof fields.pipeline === 'string' && kPathNamePattern.test(fields.pipeline) ? fields.pipeline : 'brainstorm',
      topic: typeof fields.topic === 'string' ? fields.topic : '',
    };
    this.#sessions.set(session, info);
    return info;
  }

  #prompt(task: TaskInput, session: SessionInfo): string {
    const role = task.row.role ?? '';
    const template = this.#template(session.pipeline, role);
    const orNone = (text: string) => (text.trim() === '' ? '(none)' : text);
    return renderPrompt(template, {
      ...task.row,
      id: task.id,
      pipeline: session.pipeline,
      topic: session.topic.trim() === '' ? '(no topic given: see the task description)' : session.topic,
      prev_context: orNone(task.prev_context),
      discoveries: orNone(discoveriesDigest(task.session)),
      upstream: orNone(upstreamDigest(task.session, task.upstream)),
      wisdom: orNone(wisdomDigest(task.upstream)),
    });
  }

  /** The role's template, else the default; the given folder before the built-in one. */
  #template(pipeline: string, role: string): string {
    const candidates: string[] = [];
    if (kPathNamePattern.test(role)) {
      for (const root of this.#promptRoots) candidates.push(join(root, pipeline, `${role}.md`));
    }
    for (const root of this.#promptRoots) candidates.push(join(root, 'generic', 'default.md'));
    for (const path of candidates) {
      let text = this.#templates.get(path);
      if (text === undefined) {
        text = existsSync(path) ? readFileSync(path, 'utf8') : null;
        this.#templates.set(path, text);
      }
      if (text !== null) return text;
    }
    throw new Error(`No prompt template for role "${role}" of pipeline ${pipeline}: looked for ${candidates.join(', ')}`);
  }
}

/**
 * Fills a prompt template: `{name}` becomes the value of that name as plain text, `{{` and
 * `}}` are literal braces, and a name without a value stays as written. One pass, so a
 * value that itself contains `{name}` is not expanded again.
 */
export function renderPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    return Object.hasOwn(values, name!) ? values[name!]! : match;
  });
}

/**
 * Milliseconds a 429 asks to wait: `retry-after-ms` (OpenAI's), else `Retry-After` in
 * seconds or as an HTTP date. Undefined when the server said nothing usable.
 */
export function parseRetryAfter(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms != null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers?.get('retry-after');
  if (after == null || after.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.round(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Parses and checks a reply's content; the problem, if any, is worded for the repair request. */
function readAnswer(content: string, finishReason: string | undefined, pipeline: string, role: string): Answer {
  const cutOff = finishReason === 'length' ? ' (the answer was cut off at the token limit: write less, and put long text in artifacts)' : '';
  const text = stripCodeFence(content.trim());
  if (text === '') return { ok: false, problem: `the answer was empty${cutOff}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `the answer is not valid JSON (${describe(error)})${cutOff}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: 'the answer is JSON but not an object' };
  }
  const parsed = taskResultSchema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'result'}: ${issue.message}`)
      .join('; ');
    return { ok: false, problem: `the answer does not match the result schema (${details})` };
  }
  return checkRole(pipeline, role, parsed.data);
}

/**
 * What a role's result must carry beyond the schema: the session's pipeline holds a model's
 * answer to its rules (the challenger's severity counts and signal); what they refuse gets
 * the repair request.
 */
function checkRole(pipeline: string, role: string, result: TaskResult): Answer {
  return findPipeline(pipeline)?.normaliseResult(role, result, 'require') ?? { ok: true, result };
}

/** Local models often wrap JSON in a markdown fence even when asked not to. */
function stripCodeFence(text: string): string {
  const fenced = /^```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(text);
  return fenced ? fenced[1]!.trim() : text;
}

function quoteAnswer(content: string): string {
  const trimmed = content.trim();
  if (trimmed === '') return '';
  const quoted = trimmed.length > kBadAnswerQuote ? `${trimmed.slice(0, kBadAnswerQuote)}…` : trimmed;
  return `; the answer began: ${quoted}`;
}

/** A newest-last digest of discoveries.ndjson, read from the end so that its size does not matter. */
function discoveriesDigest(session: string): string {
  const path = join(session, 'discoveries.ndjson');
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - kDigestTailBytes);
    const buffer = Buffer.alloc(size - start);
    readSync(fd, buffer, 0, buffer.length, start);
    text = buffer.toString('utf8');
    // A read that starts inside the file starts inside a line.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const entries: string[] = [];
  for (const line of text.split('\n').filter((l) => l.trim() !== '').slice(-kDigestLines)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const { type, worker, data } = (parsed ?? {}) as { type?: unknown; worker?: unknown; data?: unknown };
    if (typeof type !== 'string' || data === null || typeof data !== 'object') continue;
    const fields = data as Record<string, unknown>;
    const label = ['title', 'name', 'idea_title', 'proposal_title', 'round']
      .map((field) => fields[field])
      .find((value) => typeof value === 'string' || typeof value === 'number');
    const extra = [fields.severity, fields.rank === undefined ? undefined : `rank ${String(fields.rank)}`, fields.signal]
      .filter((value) => typeof value === 'string' && value !== '')
      .join(', ');
    const by = typeof worker === 'string' ? ` [${worker}]` : '';
    entries.push(`- ${type}: ${label === undefined ? '(untitled)' : oneLine(String(label))}${extra === '' ? '' : ` (${extra})`}${by}`);
  }
  return keepNewest(entries, kDigestChars).join('\n');
}

/** The dependencies' findings, key findings and artifacts: what a prompt cannot read itself. */
function upstreamDigest(session: string, upstream: UpstreamContext): string {
  let budget = kUpstreamChars;
  const parts: string[] = [];
  for (const dep of upstream.deps) {
    const lines = [`### ${dep.id} (${dep.status})`, dep.findings.trim() === '' ? '(no findings)' : dep.findings.trim()];
    const keyFindings = dep.discovery?.data.key_findings ?? [];
    if (keyFindings.length > 0) lines.push('Key findings:', ...keyFindings.map((finding) => `- ${finding}`));
    const decisions = dep.discovery?.data.decisions ?? [];
    if (decisions.length > 0) lines.push('Decisions:', ...decisions.map((decision) => `- ${decision}`));
    for (const artifact of dep.artifacts) {
      if (budget <= 0) {
        lines.push(`(artifact ${artifact} left out: the context is full)`);
        continue;
      }
      const content = readInside(session, artifact);
      if (content === undefined) continue;
      const room = Math.min(kArtifactChars, budget);
      const shown = content.length > room ? `${content.slice(0, room)}\n[… ${content.length - room} more characters]` : content;
      budget -= Math.min(content.length, room);
      lines.push(`#### Artifact ${artifact}`, shown.trim());
    }
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

function wisdomDigest(upstream: UpstreamContext): string {
  const parts = Object.entries(upstream.wisdom)
    .filter(([, text]) => text.trim() !== '')
    .map(([name, text]) => {
      const tail = text.trim().slice(-kWisdomFileChars);
      return `#### ${name}\n${tail.length < text.trim().length ? `…${tail.slice(tail.indexOf('\n') + 1)}` : tail}`;
    });
  return keepNewest(parts, kWisdomChars).join('\n\n');
}

/** A file of the session folder; undefined when it is missing or lies outside the folder. */
function readInside(session: string, path: string): string | undefined {
  try {
    return readFileSync(sessionPathForRead(session, path), 'utf8');
  } catch {
    return undefined;
  }
}

/** The last entries that fit in `budget` characters, in their order. */
function keepNewest(entries: readonly string[], budget: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (used + entry.length + 1 > budget) break;
    kept.unshift(entry);
    used += entry.length + 1;
  }
  return kept;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message !== '') return body.message;
  // The SDK's message is "<status> <text>"; the status is in ours already.
  return error.message.replace(/^\d{3}\s+/, '') || 'no message';
}

/** Messages that say only that something failed; the reason sits further down the causes. */
const kVagueMessages = new Set(['Connection error.', 'fetch failed', '']);

/** The SDK says "Connection error.", fetch "fetch failed"; the reason (ECONNREFUSED, a reset) is a cause. */
function causeText(error: Error): string {
  const texts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (!kVagueMessages.has(current.message)) {
      const text = typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message;
      if (!texts.includes(text)) texts.push(text);
    }
    current = current.cause;
  }
  return texts.join(': ') || 'network error';
}

/** The base URL without any user name or password in it. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(the configured base URL)';
  }
}

function isOpenAiHost(url: string): boolean {
  try {
    return new URL(url).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
