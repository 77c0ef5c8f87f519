import { describe, expect, test } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { expectWaveError } from '../helpers/wave-error.js';

const kHeader = 'id,description,role';

/** parseTasks reads records itself (no csv-parse `info`); the lines it names must still be the rows' own. */
describe('parseTasks: where problems are, after BOMs, CRLFs and quoted line ends', () => {
  test('an unclosed quote is reported at the line where its row starts, after multi-line cells and blank lines', () => {
    const text = `\uFEFF${kHeader}\r\nA,"one\r\ntwo\r\nthree",r\r\n\r\n\r\nB,"never closed,r\r\nC,d,r\r\n`;
    const error = expectWaveError(() => parseTasks(text), { code: 'CSV_PARSE' });
    expect(error.violations).toEqual([
      { line: 7, message: 'CSV parse error: unclosed quote in field 2 (description): the quoted text runs to the end of the file' },
    ]);
  });

  test('text after a closing quote is named by its first byte, at the row’s line', () => {
    const text = `${kHeader}\nA,"x\ny",r\nB,"z"é,r\n`;
    const error = expectWaveError(() => parseTasks(text), { code: 'CSV_PARSE' });
    expect(error.violations).toEqual([
      { line: 4, message: 'CSV parse error: unexpected "Ã" after the closing quote of field 2 (description): double the quotes inside a quoted field' },
    ]);
  });

  test('a quote inside an unquoted field, with lone CRs as line ends', () => {
    const error = expectWaveError(() => parseTasks(`${kHeader}\rA,"1\r2",r\rB,d,r"\r`), { code: 'CSV_PARSE' });
    expect(error.violations.map((v) => [v.line, v.message])).toEqual([
      [4, 'CSV parse error: quote inside the unquoted field 3 (role): quote the whole field and double the quotes inside it'],
    ]);
  });

  test('a parse error later in the file is reported before a bad header, as when the whole file was read first', () => {
    const error = expectWaveError(() => parseTasks('id,description\nA,"x\n'), { code: 'CSV_PARSE' });
    expect(error.violations[0]?.line).toBe(2);
  });

  test('every ragged row at once, each at its own line, after a bad header is fixed', () => {
    const error = expectWaveError(() => parseTasks(`${kHeader}\nA,"a\r\nb",r\nB,d\n\nC,d,r,x\n`), { code: 'CSV_PARSE' });
    expect(error.violations.map((v) => v.line)).toEqual([4, 6]);
  });

  test('too many rows: the first row over the limit, after multi-line cells', () => {
    const error = expectWaveError(() => parseTasks(`${kHeader}\nA,"1\n2\n3",r\n,,\nB,d,r\n`, 'tasks.csv', { maxRows: 1 }), {
      code: 'INVALID_TASKS',
    });
    expect(error.violations[0]?.line).toBe(6);
  });

  test('a header after a BOM and blank lines keeps its CRLF for the rewrite, and rows their lines', () => {
    const table = parseTasks(`\uFEFF\r\n\r\n${kHeader}\r\nA,"x\ny",r\r\nB,d,r\r\n`);
    expect(table.format).toEqual({ bom: true, eol: '\r\n' });
    expect(table.rows.map((row) => [row.id, row.line])).toEqual([['A', 4], ['B', 6]]);
  });
});
