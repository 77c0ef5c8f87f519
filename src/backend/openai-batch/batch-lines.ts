import type OpenAI from 'openai';
import type { MaxTokensField } from '../../executors/openai/answer-turn.js';
import { answerFormat } from '../../executors/openai/contract.js';
import { statusErrorClass } from '../../executors/openai/errors.js';
import type { AttemptOutcome, ErrorClass } from '../../executors/types.js';
import type { ChatBody, ChatCompletion } from './batch-api.js';

export type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The one endpoint csv-wave batches. */
export const kBatchEndpoint = '/v1/chat/completions';

/** What a task's model settings make of a conversation: the same body the openai executor sends. */
export interface BodySettings {
  model: string;
  maxTokens: number | undefined;
  /**
   * The names the limit is sent under, as the executor sends them: `max_completion_tokens`
   * alone on OpenAI's own API; both names on the servers that imitate it, so one that knows
   * only either still bounds the answer.
   */
  maxTokensFields: readonly MaxTokensField[];
}

/** The task's place in its run: which strict answer schema its requests carry (answerFormat). */
export interface BodyTask {
  pipeline: string;
  role: string;
}

export function requestBody(settings: BodySettings, task: BodyTask, messages: Message[]): ChatBody {
  const limit = settings.maxTokens;
  // In this key order, as the openai executor sends it: what a role's tasks share comes before the messages' own text.
  return {
    model: settings.model,
    response_format: answerFormat(task.pipeline, task.role),
    ...(limit === undefined ? {} : Object.fromEntries(settings.maxTokensFields.map((field) => [field, limit]))),
    messages,
  };
}

/** One line of a batch's input file (OpenAI's batch request input format). */
export function inputLine(customId: string, body: ChatBody): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: kBatchEndpoint, body });
}

/** One line of an output or error file: the answer to one request, or why there is none. */
export interface OutputLine {
  custom_id: string;
  response?: { status_code?: number; body?: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

/** The lines of output and error files by custom_id; a line that does not parse is skipped (it names no request). */
export function readOutputLines(...texts: string[]): Map<string, OutputLine> {
  const lines = new Map<string, OutputLine>();
  for (const text of texts) {
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      let line: unknown;
      try {
        line = JSON.parse(raw);
      } catch {
        continue;
      }
      if (line === null || typeof line !== 'object') continue;
      const customId = (line as { custom_id?: unknown }).custom_id;
      if (typeof customId === 'string') lines.set(customId, line as OutputLine);
    }
  }
  return lines;
}

/** What one output line says: a completion to judge, or a failure classified like a synchronous call's. */
export type LineAnswer = { kind: 'completion'; completion: ChatCompletion } | Extract<AttemptOutcome, { kind: 'error' }>;

export function lineAnswer(line: OutputLine): LineAnswer {
  const status = line.response?.status_code;
  const body = line.response?.body;
  if (!line.error && status === 200 && body !== null && typeof body === 'object') {
    return { kind: 'completion', completion: body as ChatCompletion };
  }
  const message =
    line.error?.message ??
    (body as { error?: { message?: unknown } } | undefined)?.error?.message?.toString() ??
    `HTTP ${status ?? 'status missing'}`;
  const code = line.error?.code ?? (body as { error?: { code?: unknown } } | undefined)?.error?.code?.toString();
  if (code === 'batch_expired') return { kind: 'error', errorClass: 'transient', error: `The batch expired (its 24h window ended) before this request ran: ${message}` };
  return { kind: 'error', errorClass: lineErrorClass(status, code), error: `The batch answered this request with an error${code ? ` (${code})` : ''}: ${message}` };
}

/** As a synchronous call's (statusErrorClass); an expired or cancelled request, or one without a status, is retried. */
function lineErrorClass(status: number | undefined, code: string | undefined): ErrorClass {
  if (code === 'batch_expired' || code === 'batch_cancelled' || status === undefined) return 'transient';
  return statusErrorClass(status, code);
}

// Answers are judged, repaired and failed exactly as the openai executor does it.
export { invalidAfterRepair, judgeCompletion, repairMessages, type Judged } from '../../executors/openai/answer-turn.js';
