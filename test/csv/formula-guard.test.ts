import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { guardCell, unguardCell } from '../../src/text/formula-guard.js';

/** What a spreadsheet runs as a formula when a cell starts with it (DESIGN.md section 2). */
const kFormulaStarts = ['=', '+', '-', '@', '\t', '\r'];

/** Strings that often start with a trigger or an apostrophe, and any unicode otherwise. */
const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc
    .tuple(fc.constantFrom(...kFormulaStarts, "'", "''", '"', ' ', '\n'), fc.string({ unit: 'grapheme' }))
    .map(([start, rest]) => start + rest),
);

describe('guardCell / unguardCell', () => {
  test.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@here', "'@here"],
    ['\tindent', "'\tindent"],
    ['\rline', "'\rline"],
    ["'quoted", "''quoted"],
    ['plain text', 'plain text'],
    [' =spaced', ' =spaced'],
    ['', ''],
  ])('guardCell(%j) is %j', (input, guarded) => {
    expect(guardCell(input)).toBe(guarded);
    expect(unguardCell(guarded)).toBe(input);
  });

  test('unguard undoes guard for any text (property)', () => {
    fc.assert(fc.property(text, (input) => unguardCell(guardCell(input)) === input));
  });

  test('guard undoes unguard for any guarded text (property)', () => {
    fc.assert(
      fc.property(text, (input) => {
        const guarded = guardCell(input);
        expect(guardCell(unguardCell(guarded))).toBe(guarded);
      }),
    );
  });

  test('guarded text never starts with a formula trigger (property)', () => {
    fc.assert(
      fc.property(text, (input) => {
        expect(kFormulaStarts).not.toContain(guardCell(input).charAt(0));
      }),
    );
  });
});
