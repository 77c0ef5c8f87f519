import { TextLines } from '../../../text/text-lines.js';
/** The tokens codex reports for a turn (`turn.completed`'s usage). */
export interface CodexUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

/** What a `codex exec --json` run told on stdout, read line by line. */
export interface CodexStream {
  /** `thread.started`'s thread id. */
  threadId?: string;
  /** The text of the last `agent_message` item. */
  lastMessage?: string;
  /** The usage of the last `turn.completed`; absent when no turn completed. */
  usage?: CodexUsage;
  /** The message of `turn.failed`, else of the last `error` event. */
  failure?: string;
  /** Lines of its output dropped for their length (TextLines): the answer is read from --output-last-message all the same. */
  droppedLines?: number;
}

/**
 * Reads codex's JSONL events as they come, a chunk at a time (a line may be split across
 * chunks). Lines that are not JSON objects are skipped; so are events it does not use
 * (`turn.started`, `item.started`, command and reasoning items, and the `error` items codex
 * writes as warnings, "Model metadata … not found" among them).
 */
export class CodexStreamReader {
  readonly state: CodexStream = {};
  readonly #lines = new TextLines((line) => this.#line(line));
  #lastError: string | undefined;
  #turnFailed: string | undefined;

  push(chunk: string): void {
    this.#lines.push(chunk);
  }

  /** The state once stdout has ended (a last line without its newline is read too). */
  end(): CodexStream {
    this.#lines.end();
    if (this.#lines.dropped > 0) this.state.droppedLines = this.#lines.dropped;
    const failure = this.#turnFailed ?? this.#lastError;
    if (failure !== undefined) this.state.failure = failure;
    return this.state;
  }

  #line(line: string): void {
    const event = parseObject(line);
    if (event === undefined) return;
    switch (event.type) {
      case 'thread.started':
        if (typeof event.thread_id === 'string') this.state.threadId = event.thread_id;
        return;
      case 'item.completed': {
        const item = asObject(event.item);
        if (item?.type === 'agent_message' && typeof item.text === 'string') this.state.lastMessage = item.text;
        return;
      }
      case 'turn.completed': {
        const usage = asObject(event.usage);
        if (usage !== undefined) {
          this.state.usage = {
            input_tokens: count(usage.input_tokens),
            cached_input_tokens: count(usage.cached_input_tokens),
            output_tokens: count(usage.output_tokens),
            reasoning_output_tokens: count(usage.reasoning_output_tokens),
          };
        }
        return;
      }
      case 'turn.failed': {
        const message = asObject(event.error)?.message;
        this.#turnFailed = typeof message === 'string' ? message : 'the turn failed';
        return;
      }
      case 'error':
        if (typeof event.message === 'string') this.#lastError = event.message;
        return;
    }
  }
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
