import { describe, expect, it } from 'vitest';
import { readJobReply as readWith } from '../../src/backend/bullmq/trust/reply-schema.js';
import { finishAttempt } from '../../src/executors/finish-attempt.js';
import type { ReplyRules } from '../../src/executors/reply-rules.js';
import { finishedAttempt } from '../helpers/attempt-reply.js';

/** A reply as a worker sends it: JSON text. */
const sent = (value: unknown) => JSON.stringify(value);
/** The rules of task T's replies: role `r` of the generic pipeline, the default caps. */
const kRules: ReplyRules = { pipeline: 'generic', role: 'r', limits: {} };
const readJobReply = (value: unknown) => readWith(value, 'T', kRules);

describe('a reply from a remote worker', () => {
  it('is taken as sent when it is well formed', () => {
    // As a worker's rules made it: then the coordinator's pass changes nothing.
    const result = {
      findings: 'done',
      discoveries: [{ type: 'idea', data: { title: 'x' } }],
      wisdom: { learnings: ['l'] },
      artifacts: [{ name: 'long', content: 'long' }],
    };
    const finished = finishAttempt({ id: 'T', row: { role: 'r' } as never }, { kind: 'result', result, usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const reply = { ...finished, thread: 2 };
    expect(readJobReply(sent(reply))).toEqual(JSON.parse(sent(reply)));
    // Each model request's tokens (usage.ndjson's lines) cross Redis in the reply, a failed attempt's too.
    const request = { request: 1, kind: 'first' as const, model: 'm', prompt_tokens: 3, completion_tokens: 4, cached_tokens: 0, reported: true };
    const withRequests = finishedAttempt({ findings: 'f', requests: [request, { ...request, request: 2, kind: 'repair' as const }], discovery: { taskId: 'T', role: 'r', status: 'completed', findings: 'f', error: null, artifacts: [] } });
    expect(readJobReply(sent(withRequests))).toEqual(JSON.parse(sent(withRequests)));
    const timedOut = { kind: 'error', errorClass: 'timeout', error: 'late', requests: [{ ...request, reported: false, batch: true }] };
    expect(readJobReply(sent(timedOut))).toEqual(timedOut);
    const failed = { kind: 'error', errorClass: 'rate-limited', error: '429', retryAfterMs: 2000 };
    expect(readJobReply(sent(failed))).toEqual(failed);
  });

  it.each([
    ['text that is not JSON', '{"kind": "finished", ', /does not parse/],
    ['an unknown kind', sent({ kind: 'done' }), /kind/],
    ['findings that are not text', sent(finishedAttempt({ findings: 42 as unknown as string })), /findings/],
    ['an artifact name that leaves its folder', sent(finishedAttempt({ artifacts: [{ name: '../../etc/x', content: '' }] })), /artifacts\.0\.name/],
    ['a field no reply has', sent({ ...finishedAttempt(), command: 'rm -rf /' }), /unrecognized|command/i],
    ['a request count that is not a count', sent(finishedAttempt({ requests: [{ request: 0 }] as never })), /requests\.0/],
    ['JSON nested deeper than a worker lets through', sent(finishedAttempt({ discoveries: [{ type: 'idea', data: { a: 'DEEP' } }] })).replace('"DEEP"', `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`), /deeper than 128 levels/],
    ['an error class csv-wave does not know', sent({ kind: 'error', errorClass: 'retry-forever', error: '' }), /errorClass/],
    ['a discovery record without its task', sent(finishedAttempt({ discovery: {} as never })), /discovery/],
  ])('fails its task as invalid output when it holds %s', (_what, text, why) => {
    const reply = readJobReply(text);
    expect(reply.kind).toBe('error');
    if (reply.kind !== 'error') return;
    expect(reply.errorClass).toBe('invalid-output');
    expect(reply.error).toMatch(/^Invalid output: the reply from the worker cannot be used/);
    expect(reply.error).toMatch(why);
  });
});
