import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringifyRecords } from '../../src/csv/serialize-tasks.js';
import type { FileFormat } from '../../src/csv/tasks-table.js';

// Cells full of what CSV must quote or escape: quotes, both delimiters, both line ends, a BOM, non-BMP text.
const cell = fc.oneof(
  fc.string(),
  fc.array(fc.constantFrom('"', ',', ';', '\n', '\r', '\r\n', ' ', '=', 'a', 'é', '😀', '\uFEFF', '""'), { maxLength: 12 }).map((parts) => parts.join('')),
);
const format = fc.record({
  bom: fc.boolean(),
  eol: fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n'),
  delimiter: fc.constantFrom<';' | undefined>(';', undefined),
});

/** The records' part of stringifyRecords' text: what follows its header line. */
function stringifyBody(records: string[][], format: FileFormat): string {
  const header = ['id'];
  return stringifyRecords(header, records, format).slice(stringifyRecords(header, [], format).length);
}

describe('stringifyRecords', () => {
  it('writes what csv-stringify writes with every field quoted', () => {
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { maxLength: 8 }), format, (records, raw) => {
        const fileFormat: FileFormat = raw.delimiter === undefined ? { bom: raw.bom, eol: raw.eol } : { bom: raw.bom, eol: raw.eol, delimiter: raw.delimiter };
        const expected = stringify(records, { delimiter: raw.delimiter ?? ',', quoted: true, quoted_empty: true, record_delimiter: raw.eol });
        expect(stringifyBody(records, fileFormat)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('doubles a quote and keeps line ends inside the quotes', () => {
    expect(stringifyBody([['say "hi"', 'a\nb', '']], { bom: false, eol: '\r\n' })).toBe('"say ""hi""","a\nb",""\r\n');
  });
});
