import { parse, CsvError } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CsvSyntaxError, readCsvRecords } from '../../src/csv/csv-records.js';

/** What csv-parse (with the options parseTasks used before its own reader) reads, or the error it stops at. */
function withCsvParse(text: string, delimiter: ',' | ';') {
  const records: { fields: string[]; end: number }[] = [];
  const bytes = Buffer.from(text, 'utf8');
  try {
    parse(text, {
      bom: true,
      delimiter,
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      skip_empty_lines: true,
      on_record: (fields: string[], context) => {
        // csv-parse counts bytes; the reader counts characters of the text.
        records.push({ fields, end: bytes.subarray(0, context.bytes).toString('utf8').length });
        return null;
      },
    });
    return { records };
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const found = /got "(.*?)" at line/.exec(error.message)?.[1];
    return { records, error: { code: error.code, column: error['column'] as number, ...(found === undefined ? {} : { found }) } };
  }
}

function withReader(text: string, delimiter: ',' | ';') {
  const records: { fields: string[]; end: number }[] = [];
  try {
    readCsvRecords(text, delimiter, (fields, end) => records.push({ fields, end }));
    return { records };
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    return { records, error: { code: error.code, column: error.column, ...(error.found === undefined ? {} : { found: error.found }) } };
  }
}

describe('readCsvRecords', () => {
  test('reads every text as csv-parse did: the same records, record ends and errors (code, field, character after a closing quote)', () => {
    const piece = fc.constantFrom('a', 'b c', '"', '""', ',', ';', '\n', '\r', '\r\n', ' ', "'", '=x', 'é', '\uFEFF');
    const textArb = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(textArb, fc.constantFrom(',' as const, ';' as const), (text, delimiter) => {
        expect(withReader(text, delimiter)).toEqual(withCsvParse(text, delimiter));
      }),
      { numRuns: 5_000 },
    );
  });

  test('a character after a closing quote is named by its first UTF-8 byte, as csv-parse named it', () => {
    for (const text of ['"a"é,b\n', '"a"€\n', '"a"😀\n', '"a"x']) {
      const reader = withReader(text, ',');
      expect(reader.error?.code).toBe('CSV_INVALID_CLOSING_QUOTE');
      expect(reader.error).toEqual(withCsvParse(text, ',').error);
    }
  });

  test('fields are the cells as written: quotes undone, doubled quotes single, line ends inside quotes kept', () => {
    const records: string[][] = [];
    readCsvRecords('\uFEFFid,"x"\r\n\r\n"a ""b""","1\r\n2"\n,\n', ',', (fields) => records.push(fields));
    expect(records).toEqual([['id', 'x'], ['a "b"', '1\r\n2'], ['', '']]);
  });
});
