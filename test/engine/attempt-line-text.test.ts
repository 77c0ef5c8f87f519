import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attemptLineText } from '../../src/session/attempt-line-text.js';
import { kAttemptOutcomes, type AttemptLine } from '../../src/schema/attempt.js';

// Texts JSON must escape: quotes, backslashes, control characters, lone surrogates, line separators.
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\n', '\u2028', '\ud800', '</script>', ''));
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21));
const line: fc.Arbitrary<AttemptLine> = fc.record({
  run: text,
  task: text,
  attempt: number,
  wave: number,
  start: text,
  end: text,
  duration_ms: number,
  outcome: fc.constantFrom(...kAttemptOutcomes),
  error_class: text,
  error: text,
  thread: fc.option(number, { nil: null }),
  host: text,
  pid: number,
  prompt_tokens: number,
  completion_tokens: number,
});

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
