/**
 * A CSV reader for tasks.csv, written for the one dialect csv-wave reads: `"` quotes with
 * `""` inside them, `,` or `;` between fields, and any mix of CRLF, LF and lone CR between
 * records. It reads the way csv-parse did with the options parseTasks used (`bom`,
 * `relax_column_count`, `skip_empty_lines`, the three record delimiters), and stops at the
 * same malformed fields, but it keeps no per-record `info` object and gives fields as
 * slices of the text: at 100,000 rows those objects and copies were most of the parse's
 * time and garbage (BENCHMARKS.md, "Plan").
 */

const kQuote = 0x22;
const kLf = 0x0a;
const kCr = 0x0d;

/** Why a record could not be read, in csv-parse's codes (parseTasks words the message). */
export type CsvSyntaxCode = 'CSV_QUOTE_NOT_CLOSED' | 'INVALID_OPENING_QUOTE' | 'CSV_INVALID_CLOSING_QUOTE';

/** A malformed record: what is wrong, and in which field (0-based index in the record). */
export class CsvSyntaxError extends Error {
  constructor(
    readonly code: CsvSyntaxCode,
    readonly column: number,
    /** For CSV_INVALID_CLOSING_QUOTE: the first byte after the closing quote, as a Latin-1 character (as csv-parse showed it). */
    readonly found?: string,
  ) {
    super(code);
  }
}

/**
 * Calls `onRecord` with each record's fields and the offset in `text` just past the
 * record's line end (the text's length for the last one), in file order. A line with no
 * character at all is skipped; a line of empty fields is a record. A leading BOM is not
 * text. Throws CsvSyntaxError at the first malformed field, after every record before it.
 */
export function readCsvRecords(text: string, delimiter: ',' | ';', onRecord: (fields: string[], end: number) => void): void {
  const separator = delimiter.charCodeAt(0);
  const length = text.length;
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let fields: string[] = [];
  while (at < length) {
    let code = text.charCodeAt(at);
    if (fields.length === 0 && (code === kLf || code === kCr)) {
      at += code === kCr && text.charCodeAt(at + 1) === kLf ? 2 : 1; // an empty line
      continue;
    }
    let field: string;
    if (code === kQuote) {
      let close = text.indexOf('"', at + 1);
      let doubled = false;
      for (;;) {
        if (close === -1) throw new CsvSyntaxError('CSV_QUOTE_NOT_CLOSED', fields.length);
        if (text.charCodeAt(close + 1) !== kQuote) break;
        doubled = true;
        close = text.indexOf('"', close + 2);
      }
      field = text.slice(at + 1, close);
      if (doubled) field = field.replaceAll('""', '"');
      at = close + 1;
      code = at < length ? text.charCodeAt(at) : NaN;
      if (at < length && code !== separator && code !== kLf && code !== kCr) {
        throw new CsvSyntaxError('CSV_INVALID_CLOSING_QUOTE', fields.length, firstUtf8Byte(text, at));
      }
    } else {
      const start = at;
      while (at < length && code !== separator && code !== kLf && code !== kCr) {
        if (code === kQuote) throw new CsvSyntaxError('INVALID_OPENING_QUOTE', fields.length);
        code = text.charCodeAt(++at);
      }
      field = text.slice(start, at);
    }
    fields.push(field);
    if (at >= length) break;
    if (code === separator) {
      at++;
      if (at >= length) fields.push(''); // `a,` at the very end: a last, empty field
      continue;
    }
    at += code === kCr && text.charCodeAt(at + 1) === kLf ? 2 : 1;
    onRecord(fields, at);
    fields = [];
  }
  if (fields.length > 0) onRecord(fields, length);
}

/** The first byte of the UTF-8 form of the character at `at`, as the Latin-1 character of that byte. */
function firstUtf8Byte(text: string, at: number): string {
  const point = text.codePointAt(at)!;
  const byte = point < 0x80 ? point : point < 0x800 ? 0xc0 | (point >> 6) : point < 0x10000 ? 0xe0 | (point >> 12) : 0xf0 | (point >> 18);
  return String.fromCharCode(byte);
}
