import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { lineCounter, lineOfByte } from '../../src/csv/byte-lines.js';
import { nulByteProblem } from '../../src/csv/utf8-text.js';

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
