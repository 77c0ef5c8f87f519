import { describe, expect, it } from 'vitest';
import { TextLines } from '../../src/text/text-lines.js';

function reader(maxChars?: number) {
  const lines: string[] = [];
  const split = new TextLines((line) => lines.push(line), maxChars);
  return { lines, split };
}

describe('TextLines', () => {
  it('gives each line once, whatever the chunks; a last line without its newline at the end', () => {
    const { lines, split } = reader();
    for (const chunk of ['{"a":', '1}\n{"b"', ':2}\n\n{"c":3}']) split.push(chunk);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '']);
    split.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '', '{"c":3}']);
    expect(split.dropped).toBe(0);
  });

  it('drops a line longer than its bound as it grows, and goes on with the next one', () => {
    const { lines, split } = reader(10);
    split.push('short\n');
    for (let i = 0; i < 1000; i++) split.push('x'.repeat(7));
    split.push('\nafter\n');
    expect(lines).toEqual(['short', 'after']);
    expect(split.dropped).toBe(1);
    // A line of exactly the bound is kept.
    split.push(`${'y'.repeat(10)}\n`);
    expect(lines.at(-1)).toBe('y'.repeat(10));
  });

  it('an overlong last line is dropped at the end, and counted', () => {
    const { lines, split } = reader(4);
    split.push('abcdefgh');
    split.end();
    expect(lines).toEqual([]);
    expect(split.dropped).toBe(1);
  });
});
