import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, test } from 'vitest';
import { classifyCallError, type CallFailure } from '../../src/executors/openai/errors.js';

const kCall: CallFailure = { stoppedBy: undefined, timeoutMs: 30_000, baseUrl: 'http://127.0.0.1:8080/v1' };

/** An HTTP error as the SDK builds it from a response: status, JSON body, headers. */
function httpError(status: number, body: Record<string, unknown> | undefined, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, body === undefined ? undefined : { error: body }, undefined, new Headers(headers));
}

/** An error with a `code`, as Node's network errors carry (ECONNREFUSED, UND_ERR_SOCKET). */
function coded(message: string, code: string, cause?: Error): Error {
  return Object.assign(new Error(message, cause === undefined ? {} : { cause }), { code });
}

function connectionError(cause: Error | undefined): APIConnectionError {
  return new APIConnectionError({ cause });
}

describe('classifyCallError: HTTP 429', () => {
  test('with Retry-After: rate-limited, waiting as asked', () => {
    const outcome = classifyCallError(httpError(429, { message: 'Rate limit reached for requests' }, { 'retry-after': '3' }), kCall);
    expect(outcome).toEqual({
      kind: 'error',
      errorClass: 'rate-limited',
      error: 'Rate limited by the model server (HTTP 429): Rate limit reached for requests',
      retryAfterMs: 3000,
    });
  });

  test('with retry-after-ms: that header wins over Retry-After', () => {
    const outcome = classifyCallError(httpError(429, { message: 'slow down' }, { 'retry-after-ms': '1500', 'retry-after': '9' }), kCall);
    expect(outcome.retryAfterMs).toBe(1500);
  });

  test('without Retry-After: rate-limited, and the engine picks the wait (no retryAfterMs at all)', () => {
    const outcome = classifyCallError(httpError(429, { message: 'slow down' }), kCall);
    expect(outcome.errorClass).toBe('rate-limited');
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  test('with an unusable Retry-After: rate-limited without a wait of its own', () => {
    const outcome = classifyCallError(httpError(429, { message: 'slow down' }, { 'retry-after': 'later' }), kCall);
    expect(outcome.errorClass).toBe('rate-limited');
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  test('insufficient_quota: a task failure, not worth retrying, even with Retry-After', () => {
    const error = httpError(429, { message: 'You exceeded your current quota', code: 'insufficient_quota' }, { 'retry-after': '3' });
    expect(classifyCallError(error, kCall)).toEqual({
      kind: 'error',
      errorClass: 'task-failure',
      error: 'The model server refused the request (HTTP 429): You exceeded your current quota',
    });
  });
});

describe('classifyCallError: other HTTP statuses', () => {
  test.each([500, 502, 503, 504, 599])('%i: transient', (status) => {
    expect(classifyCallError(httpError(status, { message: 'overloaded' }), kCall)).toEqual({
      kind: 'error',
      errorClass: 'transient',
      error: `The model server failed (HTTP ${status}): overloaded`,
    });
  });

  test.each([408, 409])('%i says "try again": transient', (status) => {
    expect(classifyCallError(httpError(status, { message: 'try again' }), kCall).errorClass).toBe('transient');
  });

  test.each([400, 401, 403, 404, 422])("%i: a task failure, with the server's message", (status) => {
    expect(classifyCallError(httpError(status, { message: "Invalid value for 'model'" }), kCall)).toEqual({
      kind: 'error',
      errorClass: 'task-failure',
      error: `The model server refused the request (HTTP ${status}): Invalid value for 'model'`,
    });
  });

  test("a body without a message: the SDK's text, without the status it starts with", () => {
    expect(classifyCallError(httpError(503, undefined), kCall).error).toBe('The model server failed (HTTP 503): status code (no body)');
    expect(classifyCallError(httpError(400, { detail: 'bad' }), kCall).error).toBe('The model server refused the request (HTTP 400): {"detail":"bad"}');
  });
});

describe('classifyCallError: connection errors', () => {
  test('the reason is found down the causes, past the vague "Connection error." and "fetch failed"', () => {
    const refused = coded('connect ECONNREFUSED 127.0.0.1:8080', 'ECONNREFUSED');
    const error = connectionError(new TypeError('fetch failed', { cause: refused }));
    expect(classifyCallError(error, kCall)).toEqual({
      kind: 'error',
      errorClass: 'transient',
      error: 'Cannot reach the model server at http://127.0.0.1:8080/v1: connect ECONNREFUSED 127.0.0.1:8080',
    });
  });

  test('a code the message does not name is added; every distinct reason is kept, in order, once', () => {
    const socket = coded('other side closed', 'UND_ERR_SOCKET');
    const error = connectionError(new Error('terminated', { cause: new Error('terminated', { cause: socket }) }));
    expect(classifyCallError(error, kCall).error).toBe('Cannot reach the model server at http://127.0.0.1:8080/v1: terminated: other side closed (UND_ERR_SOCKET)');
  });

  test('causes are followed five deep, no further', () => {
    let cause = new Error('level 6');
    for (let level = 5; level >= 2; level--) cause = new Error(`level ${level}`, { cause });
    const text = classifyCallError(connectionError(cause), kCall).error;
    expect(text).toContain('level 5');
    expect(text).not.toContain('level 6');
  });

  test('no reason anywhere: "network error"', () => {
    expect(classifyCallError(connectionError(undefined), kCall).error).toBe('Cannot reach the model server at http://127.0.0.1:8080/v1: network error');
    expect(classifyCallError(connectionError(new TypeError('fetch failed')), kCall).error).toMatch(/: network error$/);
  });

  test('the base URL is quoted without its user name and password', () => {
    const call = { ...kCall, baseUrl: 'http://alice:hunter2-secret@127.0.0.1:8080/v1' };
    const text = classifyCallError(connectionError(coded('connect ECONNREFUSED', 'ECONNREFUSED')), call).error;
    expect(text).toBe('Cannot reach the model server at http://127.0.0.1:8080/v1: connect ECONNREFUSED');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('alice');
  });

  test('a base URL that does not parse is not quoted at all', () => {
    const text = classifyCallError(connectionError(undefined), { ...kCall, baseUrl: 'not a url:secret@' }).error;
    expect(text).toBe('Cannot reach the model server at (the configured base URL): network error');
  });
});

describe('classifyCallError: timeouts, interrupts, anything else', () => {
  test("the executor's own timer: timeout, whatever the error says", () => {
    const outcome = classifyCallError(new APIUserAbortError(), { ...kCall, stoppedBy: 'timeout', timeoutMs: 2500 });
    expect(outcome).toEqual({ kind: 'error', errorClass: 'timeout', error: 'Timed out after 2.5s waiting for the model' });
  });

  test("the SDK's own timeout: timeout", () => {
    expect(classifyCallError(new APIConnectionTimeoutError(), kCall).errorClass).toBe('timeout');
  });

  test('an interrupted run: transient, whatever the error says', () => {
    for (const error of [new APIUserAbortError(), httpError(400, { message: 'x' })]) {
      expect(classifyCallError(error, { ...kCall, stoppedBy: 'abort' })).toEqual({
        kind: 'error',
        errorClass: 'transient',
        error: 'Stopped: the run was interrupted',
      });
    }
  });

  test('an abort nobody asked for, a plain error, a thrown string: a task failure with the text', () => {
    expect(classifyCallError(new APIUserAbortError(), kCall)).toEqual({
      kind: 'error',
      errorClass: 'task-failure',
      error: 'The model call failed: Request was aborted.',
    });
    expect(classifyCallError(new Error('boom'), kCall).error).toBe('The model call failed: boom');
    expect(classifyCallError('boom', kCall).errorClass).toBe('task-failure');
  });
});
