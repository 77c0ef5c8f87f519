import { TextLines } from '../../../text/text-lines.js';
/** The tokens of one `claude -p` invocation, all its turns together (its result's usage). */
export interface ClaudeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The final `result` event of an invocation. */
export interface ClaudeResult {
  /** `success`, `error_max_turns`, `error_max_budget_usd`, `error_max_structured_output_retries`, `error_during_execution`. */
  subtype: string;
  isError: boolean;
  /** The HTTP status of the API error that ended it, when one did. */
  apiErrorStatus?: number;
  /** The result text: the answer as text, or the error's message. */
  text?: string;
  /** The answer of `--json-schema` (its StructuredOutput tool call). */
  structuredOutput?: unknown;
  usage?: ClaudeUsage;
  costUsd?: number;
  numTurns?: number;
}

/** What a `claude -p --output-format stream-json --verbose` run told on stdout. */
export interface ClaudeStream {
  /** The session id, from the `system` init event or the result. */
  sessionId?: string;
  /** The text of the last assistant message that had any. */
  lastText?: string;
  /** Assistant messages seen (API answers): an invocation stopped on its way spent tokens on them. */
  assistantMessages: number;
  result?: ClaudeResult;
  /** Lines of its output dropped for their length (TextLines). */
  droppedLines?: number;
}

/**
 * Reads claude's JSON-line events as they come, a chunk at a time (a line may be split
 * across chunks). Lines that are not JSON objects are skipped, and so are the events it
 * does not use (tool results, hooks, status lines).
 */
export class ClaudeStreamReader {
  readonly state: ClaudeStream = { assistantMessages: 0 };
  readonly #lines = new TextLines((line) => this.#line(line));

  push(chunk: string): void {
    this.#lines.push(chunk);
  }

  /** The state once stdout has ended (a last line without its newline is read too). */
  end(): ClaudeStream {
    this.#lines.end();
    if (this.#lines.dropped > 0) this.state.droppedLines = this.#lines.dropped;
    return this.state;
  }

  #line(line: string): void {
    const event = parseObject(line);
    if (event === undefined) return;
    if (typeof event.session_id === 'string' && this.state.sessionId === undefined) this.state.sessionId = event.session_id;
    switch (event.type) {
      case 'assistant': {
        this.state.assistantMessages++;
        const content = asObject(event.message)?.content;
        const texts = Array.isArray(content)
          ? content.flatMap((block) => {
              const part = asObject(block);
              return part?.type === 'text' && typeof part.text === 'string' && part.text.trim() !== '' ? [part.text] : [];
            })
          : [];
        if (texts.length > 0) this.state.lastText = texts.join('\n');
        return;
      }
      case 'result':
        this.state.result = readResult(event);
        if (typeof event.session_id === 'string') this.state.sessionId = event.session_id;
        return;
    }
  }
}

function readResult(event: Record<string, unknown>): ClaudeResult {
  const usage = resultUsage(event);
  return {
    subtype: typeof event.subtype === 'string' ? event.subtype : '',
    isError: event.is_error === true,
    ...(typeof event.api_error_status === 'number' ? { apiErrorStatus: event.api_error_status } : {}),
    ...(typeof event.result === 'string' ? { text: event.result } : {}),
    ...(event.structured_output === undefined || event.structured_output === null ? {} : { structuredOutput: event.structured_output }),
    ...(usage === undefined ? {} : { usage }),
    ...(typeof event.total_cost_usd === 'number' && Number.isFinite(event.total_cost_usd) && event.total_cost_usd >= 0 ? { costUsd: event.total_cost_usd } : {}),
    ...(typeof event.num_turns === 'number' ? { numTurns: event.num_turns } : {}),
  };
}

/**
 * The tokens of the invocation. `usage` holds them, but a run that claude stopped itself
 * (error_max_budget_usd, seen with 2.1.197) reports zeros there and the real counts in
 * `modelUsage`, per model: those are added up when `usage` says nothing was spent.
 */
function resultUsage(event: Record<string, unknown>): ClaudeUsage | undefined {
  const usage = asObject(event.usage);
  const fromUsage: ClaudeUsage | undefined =
    usage === undefined
      ? undefined
      : {
          input_tokens: count(usage.input_tokens),
          output_tokens: count(usage.output_tokens),
          cache_read_input_tokens: count(usage.cache_read_input_tokens),
          cache_creation_input_tokens: count(usage.cache_creation_input_tokens),
        };
  if (fromUsage !== undefined && total(fromUsage) > 0) return fromUsage;
  const models = asObject(event.modelUsage);
  if (models === undefined) return fromUsage;
  const sum: ClaudeUsage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  for (const value of Object.values(models)) {
    const model = asObject(value);
    if (model === undefined) continue;
    sum.input_tokens += count(model.inputTokens);
    sum.output_tokens += count(model.outputTokens);
    sum.cache_read_input_tokens += count(model.cacheReadInputTokens);
    sum.cache_creation_input_tokens += count(model.cacheCreationInputTokens);
  }
  return total(sum) > 0 || fromUsage === undefined ? sum : fromUsage;
}

function total(usage: ClaudeUsage): number {
  return usage.input_tokens + usage.output_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
}

function parseObject(line: string): Record<string, unknown> | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return asObject(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
