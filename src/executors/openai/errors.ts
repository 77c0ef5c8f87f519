import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { describe } from '../module.js';
import type { AttemptOutcome, ErrorClass } from '../types.js';

/** Why the executor itself ended a call, if it did: its own timer, or the run's abort signal. */
export type StoppedBy = 'timeout' | 'abort' | undefined;

/** What a failed call's outcome depends on besides the error itself. */
export interface CallFailure {
  stoppedBy: StoppedBy;
  /** The attempt's --timeout, quoted in a timeout's message. */
  timeoutMs: number;
  /** The client's base URL, quoted (without credentials) when the server cannot be reached. */
  baseUrl: string;
}

/** Messages that say only that something failed; the reason sits further down the causes. */
const kVagueMessages = new Set(['Connection error.', 'fetch failed', '']);
/** How far down an error's causes the reason of a connection failure is looked for. */
const kMaxCauseDepth = 5;

/**
 * The error class of a failed model call (DESIGN.md section 5): the engine retries by it,
 * so the SDK retries nothing. 429 waits for Retry-After unless the quota is gone; 5xx, 408,
 * 409 and network trouble are transient; any other HTTP error fails the task.
 */
export function classifyCallError(error: unknown, call: CallFailure): Extract<AttemptOutcome, { kind: 'error' }> {
  if (call.stoppedBy === 'timeout' || error instanceof APIConnectionTimeoutError) {
    return { kind: 'error', errorClass: 'timeout', error: `Timed out after ${call.timeoutMs / 1000}s waiting for the model` };
  }
  if (call.stoppedBy === 'abort') return { kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' };
  if (error instanceof APIConnectionError) {
    return { kind: 'error', errorClass: 'transient', error: `Cannot reach the model server at ${safeUrl(call.baseUrl)}: ${causeText(error)}` };
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const message = serverMessage(error);
    const errorClass = statusErrorClass(status, error.code);
    if (errorClass === 'rate-limited') {
      const retryAfterMs = parseRetryAfter(error.headers);
      return {
        kind: 'error',
        errorClass: 'rate-limited',
        error: `Rate limited by the model server (HTTP 429): ${message}`,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    }
    if (errorClass === 'transient') {
      return { kind: 'error', errorClass: 'transient', error: `The model server failed (HTTP ${status}): ${message}` };
    }
    return { kind: 'error', errorClass: 'task-failure', error: `The model server refused the request (HTTP ${status}): ${message}` };
  }
  return { kind: 'error', errorClass: 'task-failure', error: `The model call failed: ${describe(error)}` };
}

/**
 * The class of a model server's HTTP error, for a synchronous call and a batched request
 * alike: 429 is rate-limited unless the quota is gone; 5xx, 408 and 409 (the two 4xx
 * answers that say "try again", which the SDK retries too) are transient; any other 4xx
 * fails the task.
 */
export function statusErrorClass(status: number, code: string | null | undefined): ErrorClass {
  if (status === 429) return code === 'insufficient_quota' ? 'task-failure' : 'rate-limited';
  if (status >= 500 || status === 408 || status === 409) return 'transient';
  return 'task-failure';
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

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === 'string' && body.message !== '') return body.message;
  // The SDK's message is "<status> <text>"; the status is in ours already.
  return error.message.replace(/^\d{3}\s+/, '') || 'no message';
}

/** The SDK says "Connection error.", fetch "fetch failed"; the reason (ECONNREFUSED, a reset) is a cause. */
function causeText(error: Error): string {
  const texts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < kMaxCauseDepth; depth++) {
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
