import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attemptLineText } from '../../src/session/attempt-line-text.js';
import { kAttemptOutcomes, type AttemptLine } from '../../src/schema/attempt.js';

// Texts JSON must escape: quotes, backslashes, control characters, lone surrogates, line separators.
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\n', '\u2028', '\ud800', '</script>', ''));
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21));
// queued_ms is written only for an attempt a worker ran (--backend bullmq): present or absent.
const line: fc.Arbitrary<AttemptLine> = fc.record({
  run: text,
  task: text,
  attempt: number,
  wave: number,
  start: text,
  end: text,
  duration_ms: number,
  queued_ms: number,
  outcome: fc.constantFrom(...kAttemptOutcomes),
  error_class: text,
  error: text,
  thread: fc.option(number, { nil: null }),
  host: text,
  pid: number,
  prompt_tokens: number,
  completion_tokens: number,
}, { requiredKeys: ['run', 'task', 'attempt', 'wave', 'start', 'end', 'duration_ms', 'outcome', 'error_class', 'error', 'thread', 'host', 'pid', 'prompt_tokens', 'completion_tokens'] });

describe('attemptLineText', () => {
  it('is what JSON.stringify writes for the line', () => {
    fc.assert(
      fc.property(line, (value) => {
        expect(attemptLineText(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 1000 },
    );
  });
});
