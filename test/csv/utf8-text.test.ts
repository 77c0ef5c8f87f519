import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { lineCounter, lineOfByte } from '../../src/csv/byte-lines.js';
import { firstInvalidUtf8, nulByteProblem } from '../../src/csv/utf8-text.js';

/** Bytes near the edges of UTF-8's ranges (lead bytes, continuation limits), mixed with any byte. */
const byteArb = fc.oneof(
  fc.constantFrom(0x00, 0x0a, 0x0d, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf),
  fc.constantFrom(0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff),
  fc.integer({ min: 0, max: 255 }),
);
const bytesArb = fc.array(byteArb, { maxLength: 24 }).map((bytes) => Uint8Array.from(bytes));

describe('firstInvalidUtf8', () => {
  test('finds a bad sequence exactly when Node says the bytes are not UTF-8, and everything before it is UTF-8', () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const at = firstInvalidUtf8(bytes);
        expect(at === -1).toBe(isUtf8(bytes));
        if (at !== -1) expect(isUtf8(bytes.subarray(0, at))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ['an overlong 2-byte form', [0x41, 0xc0, 0x80], 1],
    ['a surrogate', [0xed, 0xa0, 0x80], 0],
    ['past U+10FFFF', [0x41, 0x42, 0xf4, 0x90, 0x80, 0x80], 2],
    ['a sequence cut by the end', [0xe2, 0x82], 0],
    ['a stray continuation byte after a good letter', [0xc3, 0xa9, 0x80], 2],
  ])('%s', (_name, bytes, offset) => {
    expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(offset);
  });
});

describe('nulByteProblem', () => {
  test('names the first NUL by byte offset and line (a lone CR ends a line, CRLF counts once)', () => {
    const problem = nulByteProblem(Buffer.from('a\r\nb\rc\nd\0e\0', 'latin1'));
    expect(problem?.line).toBe(4);
    expect(problem?.message).toMatch(/^NUL byte at byte 8: /);
  });

  test('none in text without NUL', () => {
    expect(nulByteProblem(Buffer.from('id\n\r\n'))).toBeUndefined();
  });
});

describe('lineCounter', () => {
  test('gives the line of the first byte after the blank lines that follow a record end, as lineOfByte does', () => {
    const textArb = fc.array(fc.constantFrom('a', '\n', '\r', '\r\n', ','), { maxLength: 30 }).map((parts) => Buffer.from(parts.join('')));
    fc.assert(
      fc.property(textArb, fc.array(fc.nat(), { maxLength: 6 }), (bytes, raw) => {
        const ends = raw.map((n) => n % (bytes.length + 1)).sort((a, b) => a - b);
        const lineAt = lineCounter(bytes);
        for (const end of ends) {
          let start = end;
          while (bytes[start] === 0x0a || bytes[start] === 0x0d) start++;
          expect(lineAt(end)).toBe(lineOfByte(bytes, start));
        }
      }),
    );
  });
});
