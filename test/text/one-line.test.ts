import { describe, expect, it } from 'vitest';
import { oneLine } from '../../src/text/one-line.js';

describe('oneLine', () => {
  it('keeps a short text whole, on one line', () => {
    expect(oneLine('  two\n\twords  ', 60)).toBe('two words');
  });

  it('cuts a long text at the last word boundary that fits, ending in …', () => {
    const text = 'The river carries silt downstream every spring when the snow melts';
    const line = oneLine(text, 30);
    expect(line).toBe('The river carries silt…');
    expect(line.length).toBeLessThanOrEqual(30);
    expect(text.startsWith(line.slice(0, -1))).toBe(true);
  });

  it('keeps a word that ends exactly at the cut', () => {
    expect(oneLine('alpha beta gamma', 11)).toBe('alpha beta…');
  });

  it('cuts inside a first word longer than the line, and never splits a surrogate pair', () => {
    expect(oneLine('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
    const line = oneLine(`${'a'.repeat(8)}😀😀`, 10);
    expect(line).toBe(`${'a'.repeat(8)}…`);
  });
});
