import { expect } from 'vitest';
import { WaveError, type WaveErrorCode } from '../../src/errors.js';

/** Asserts that fn throws a WaveError with the given code and (when given) message. */
export function expectWaveError(fn: () => unknown, expected: { code: WaveErrorCode; message?: string | RegExp }): WaveError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(WaveError);
  const error = thrown as WaveError;
  expect(error.code).toBe(expected.code);
  if (typeof expected.message === 'string') expect(error.message).toBe(expected.message);
  else if (expected.message) expect(error.message).toMatch(expected.message);
  return error;
}
