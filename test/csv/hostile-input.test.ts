import { isUtf8 } from 'node:buffer';
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { kTaskColumns } from '../../src/core/task.js';
import { showCell } from '../../src/csv/columns.js';
import { splitList } from '../../src/core/id-list.js';
import { decodeUtf8Text, textProblem } from '../../src/csv/utf8-text.js';
import { kDefaultMaxRows, parseTasks, readTasksFile } from '../../src/csv/parse-tasks.js';
import { withPipelineColumns } from '../../src/pipelines/pipeline-columns.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';
import { serializeWaveFile } from '../../src/csv/wave-file.js';
import { readSessionConfig } from '../../src/session/session.js';
import { validateTasks } from '../../src/session/validate.js';
import { buildSession } from '../helpers/session-builder.js';
import { expectWaveError } from '../helpers/wave-error.js';

const kSeedHeader = kTaskColumns.join(',');
const quote = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

function seedRow(id: string, cells: Partial<Record<(typeof kTaskColumns)[number], string>> = {}): string[] {
  return kTaskColumns.map((column) => cells[column] ?? (column === 'id' ? id : column === 'description' ? `Do ${id}` : column === 'role' ? 'ideator' : ''));
}

function canonical(rows: string[][], options: { header?: string; delimiter?: string; eol?: string; bom?: boolean } = {}): string {
  const delimiter = options.delimiter ?? ',';
  const eol = options.eol ?? '\n';
  const header = options.header ?? kTaskColumns.join(delimiter);
  const lines = [header, ...rows.map((cells) => cells.map(quote).join(delimiter))];
  return `${options.bom === true ? '\uFEFF' : ''}${lines.join(eol)}${eol}`;
}

describe('showCell: values in messages', () => {
  test.each([
    ['A-1', 'A-1'],
    ['has space', 'has space'],
    ['', ''],
    ['idé😀', 'idé😀'],
    ['A ', '"A "'],
    [' A', '" A"'],
    ['a\tb', '"a\\tb"'],
    ['two\r\nlines', '"two\\r\\nlines"'],
    ['x\u200By', '"x\\u200By"'],
    ['bidi\u202Eevil', '"bidi\\u202Eevil"'],
    ['nb\u00A0sp', '"nb\\u00A0sp"'],
    ['tag\u{E0001}', '"tag\\u{E0001}"'],
    ['bell\u0007"q"\\', '"bell\\u0007\\"q\\"\\\\"'],
    ['lone\uD800', '"lone\\uD800"'],
  ])('%j is shown as %s', (cell, shown) => {
    expect(showCell(cell)).toBe(shown);
  });

  test('a long value is cut at 100 characters, with its length', () => {
    expect(showCell('x'.repeat(100))).toBe('x'.repeat(100));
    expect(showCell('x'.repeat(12_345))).toBe(`${'x'.repeat(100)}… (12,345 characters)`);
  });

  test('the cut never splits a surrogate pair', () => {
    expect(showCell(`${'x'.repeat(99)}😀tail`)).toBe(`${'x'.repeat(99)}… (105 characters)`);
  });

  test('a shown value never holds a line break or a control character (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (cell) => {
        expect(showCell(cell)).not.toMatch(/[\p{Cc}\p{Zl}\p{Zp}]/u);
      }),
    );
  });
});

/** The byte offset a textProblem message names. */
function reportedOffset(bytes: Uint8Array): number | undefined {
  const problem = textProblem(bytes);
  if (problem === undefined) return undefined;
  const match = /at byte (\d+)/.exec(problem.message);
  expect(match, problem.message).not.toBeNull();
  return Number(match![1]);
}

describe('bytes that are not UTF-8 text', () => {
  test('valid UTF-8 of every length passes, BOM included', () => {
    expect(textProblem(Buffer.from('\uFEFFid,é,€,😀,\u{10FFFF}\r\n', 'utf8'))).toBeUndefined();
  });

  test.each([
    ['F5 (never a lead byte)', [0x41, 0xf5, 0x80, 0x80, 0x80], 1],
    ['C1 (overlong two-byte lead)', [0x41, 0xc1, 0x81], 1],
    ['E0 80 80 (overlong three-byte)', [0xe0, 0x80, 0x80], 0],
    ['F4 90 80 80 (past U+10FFFF)', [0x41, 0x42, 0xf4, 0x90, 0x80, 0x80], 2],
    ['a lone continuation byte', [0xc3, 0xa9, 0x80], 2],
    ['a lead byte cut by a new line', [0xc3, 0xa9, 0x0a, 0xe2, 0x82, 0x0a], 3],
  ])('%s', (_name, bytes, offset) => {
    expect(reportedOffset(Uint8Array.from(bytes))).toBe(offset);
  });

  test('the line is the line of the bad byte, counting LF, CRLF and lone CR', () => {
    const bytes = Buffer.concat([Buffer.from('a\r\nb\rc\nd "x\n'), Buffer.from([0xff])]);
    expect(textProblem(bytes)?.line).toBe(5);
  });

  test('a Latin-1 or Windows-1252 file is named as such; other bad bytes are not', () => {
    expect(textProblem(Buffer.from('id\nCaf\xe9\n', 'latin1'))?.message).toContain('(0xE9, "é" in Latin-1/Windows-1252)');
    expect(textProblem(Buffer.from('id\n\x80 5\n', 'latin1'))?.message).toContain('(0x80, "€" in Latin-1/Windows-1252)');
    expect(textProblem(Buffer.from('id\n\xa0\n', 'latin1'))?.message).toContain('(0xA0, "\\u00A0" in Latin-1/Windows-1252)');
    // 0x81 means nothing in Windows-1252; after good UTF-8, a bad byte is just a bad byte.
    expect(textProblem(Buffer.from('id\n\x81\n', 'latin1'))?.message).toContain('(0x81)');
    expect(textProblem(Buffer.concat([Buffer.from('é\n'), Buffer.from([0xe9])]))?.message).toContain('(0xE9)');
  });

  test('the offset is where the first ill-formed sequence starts, as Node reads UTF-8 (property)', () => {
    const byte = fc.oneof(fc.integer({ min: 1, max: 0x7f }), fc.integer({ min: 0x80, max: 0xff }));
    const valid = fc.string({ unit: 'grapheme', maxLength: 8 }).map((text) => [...Buffer.from(text.replaceAll('\0', ''))]);
    const bytes = fc.array(fc.oneof(byte.map((b) => [b]), valid), { maxLength: 30 }).map((parts) => Uint8Array.from(parts.flat()));
    fc.assert(
      fc.property(bytes, (input) => {
        fc.pre(!(input[0] === 0xff && input[1] === 0xfe) && !(input[0] === 0xfe && input[1] === 0xff));
        const at = reportedOffset(input);
        if (isUtf8(input)) {
          expect(at).toBeUndefined();
          return;
        }
        expect(at).toBeDefined();
        // Everything before is good UTF-8, and no sequence that starts there is.
        expect(isUtf8(input.subarray(0, at))).toBe(true);
        for (let end = at! + 1; end <= Math.min(input.length, at! + 4); end++) {
          expect(isUtf8(input.subarray(0, end))).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('a NUL byte is refused by parseTasks too, at its line and byte', () => {
    const error = expectWaveError(() => parseTasks('id,description,role\n"A","é\0","r"\n'), { code: 'CSV_PARSE' });
    expect(error.violations).toEqual([
      { line: 2, message: expect.stringMatching(/^NUL byte at byte 27: /) as unknown as string },
    ]);
  });

  test('decodeUtf8Text keeps the BOM for the parser to see', () => {
    expect(decodeUtf8Text(Buffer.from('\uFEFFid\n'))).toBe('\uFEFFid\n');
  });
});

describe('a ;-separated file, as spreadsheets in European locales save it', () => {
  const rows = [
    seedRow('IDEA-1', { title: 'Idea, one', angle: 'Technical;Product', description: 'a "quoted"; word' }),
    seedRow('IDEA-2', { deps: 'IDEA-1', context_from: 'IDEA-1', findings: "'=not a formula" }),
  ];

  test.each([
    { name: 'LF', eol: '\n', bom: false },
    { name: 'CRLF with a BOM', eol: '\r\n', bom: true },
  ])('is read, and written back byte for byte ($name)', ({ eol, bom }) => {
    const text = canonical(rows, { delimiter: ';', eol, bom });
    const table = parseTasks(text);
    expect(table.format).toEqual({ bom, eol, delimiter: ';' });
    expect(table.rows.map((row) => [row.id, row.title, row.angle, row.description, row.findings])).toEqual([
      ['IDEA-1', 'Idea, one', 'Technical;Product', 'a "quoted"; word', ''],
      ['IDEA-2', '', '', 'Do IDEA-2', '=not a formula'],
    ]);
    expect(splitList(table.rows[0]!.angle)).toEqual(['Technical', 'Product']);
    expect(serializeTasks(table)).toBe(text);
  });

  test.each([
    ['unquoted', 'notes, misc'],
    ['quoted', '"notes, misc"'],
  ])('a header name with a comma (%s) does not hide the ;', (_how, name) => {
    const text = canonical([[...seedRow('A'), 'n']], { delimiter: ';', header: `${kTaskColumns.join(';')};${name}` });
    const table = parseTasks(text);
    expect(table.format.delimiter).toBe(';');
    expect(table.columns.at(-1)).toBe('notes, misc');
    expect(table.rows[0]!.extra).toEqual({ 'notes, misc': 'n' });
    // A spreadsheet quotes a header name only when it holds the ;, so that is the layout kept.
    if (!name.startsWith('"')) expect(serializeTasks(table)).toBe(text);
  });

  test('a comma header with a ; in a name stays a comma file', () => {
    const table = parseTasks(canonical([[...seedRow('A'), 'n']], { header: `${kSeedHeader},notes; misc` }));
    expect(table.format.delimiter).toBeUndefined();
    expect(table.columns.at(-1)).toBe('notes; misc');
  });

  test('its wave files use ; too', () => {
    const table = parseTasks(canonical(rows, { delimiter: ';' }));
    const wave = serializeWaveFile([{ row: table.rows[0]!, prevContext: '' }], table.format);
    expect(wave.split('\n')[0]).toBe('id;title;description;role;angle;gc_round;deps;context_from;exec_mode;wave;prev_context');
  });

  test('a comma file whose cells hold ; stays a comma file', () => {
    const text = canonical([seedRow('A', { deps: 'B;C' })]);
    expect(parseTasks(text).format.delimiter).toBeUndefined();
  });

  test('a header with ; but no known name is read with commas, and reported as missing its id column', () => {
    const error = expectWaveError(() => parseTasks('ident;desc;job\nA;do;x\n'), { code: 'CSV_MISSING_COLUMN' });
    expect(error.violations.map((v) => v.message)).toEqual(['Missing required column: id']);
  });
});

describe('cells and ids that spreadsheets would change, kept as they are', () => {
  test('leading zeros and long numeric ids survive a read and a write byte for byte', () => {
    const text = canonical([
      seedRow('007', { gc_round: '00' }),
      seedRow('12345678901234567890', { deps: '007', context_from: '007' }),
      seedRow('1E5', { deps: '12345678901234567890' }),
      seedRow('0x1F'),
    ]);
    const table = parseTasks(text);
    expect(table.rows.map((row) => row.id)).toEqual(['007', '12345678901234567890', '1E5', '0x1F']);
    expect(serializeTasks(table)).toBe(text);
    const report = validateTasks(table, 'brainstorm');
    expect(report.violations).toEqual([]);
    expect(report.plan.waves.get('1E5')).toBe(3);
  });

  test('an unquoted 007 is read as 007', () => {
    expect(parseTasks('id,description,role\n007,do,ideator\n').rows[0]!.id).toBe('007');
  });

  test('deps with stray spaces and a trailing ; are kept verbatim and read as their ids', () => {
    const text = canonical([seedRow('A'), seedRow('B', { deps: ' A ; ', context_from: 'A;;' })]);
    const table = parseTasks(text);
    expect(table.rows[1]!.deps).toBe(' A ; ');
    expect(splitList(table.rows[1]!.deps)).toEqual(['A']);
    expect(validateTasks(table, 'brainstorm').violations).toEqual([]);
    expect(serializeTasks(table)).toBe(text);
  });

  test('10,000 columns: every extra column kept, in place, byte for byte', () => {
    const extras = Array.from({ length: 10_000 - kTaskColumns.length }, (_, i) => `col ${i}`);
    const text = canonical(
      [
        [...seedRow('A'), ...extras.map((_, i) => `a${i}`)],
        [...seedRow('B'), ...extras.map(() => '')],
      ],
      { header: `${kSeedHeader},${extras.join(',')}` },
    );
    const table = parseTasks(text);
    expect(table.columns).toHaveLength(10_000);
    expect(table.rows[0]!.extra['col 9984']).toBe('a9984');
    expect(serializeTasks(table)).toBe(text);
  });

  test('a cell of exactly 32,767 characters passes; one more in any input column is reported', () => {
    const ok = parseTasks(canonical([seedRow('A', { title: 'x'.repeat(32_767) })]));
    expect(validateTasks(ok, 'brainstorm').violations).toEqual([]);
    const long = parseTasks(canonical([seedRow('A', { angle: 'x'.repeat(32_768), deps: 'y'.repeat(40_000) })]));
    expect(validateTasks(long, 'brainstorm').violations.map((v) => v.message)).toEqual([
      'Cell too long in column angle: 32,768 characters, more than the 32,767 a spreadsheet cell holds: move the text into a file and refer to it',
      'Cell too long in column deps: 40,000 characters, more than the 32,767 a spreadsheet cell holds: move the text into a file and refer to it',
      `Unknown dependency: ${'y'.repeat(100)}… (40,000 characters)`,
    ]);
  });

  test('output cells are the engine’s: a long one is not an input problem', () => {
    const table = parseTasks(canonical([seedRow('A', { status: 'failed', error: 'e'.repeat(40_000) })]));
    expect(validateTasks(table, 'brainstorm').violations).toEqual([]);
  });
});

describe('rows per file', () => {
  const file = (rows: number) => `id,description,role\n${Array.from({ length: rows }, (_, i) => `T${i},do,ideator\n`).join('')}`;

  test('the default is 1,000,000', () => {
    expect(kDefaultMaxRows).toBe(1_000_000);
  });

  test('exactly max_rows rows are read; one more is refused at the line of the first row over', () => {
    expect(parseTasks(file(5), 'tasks.csv', { maxRows: 5 }).rows).toHaveLength(5);
    const error = expectWaveError(() => parseTasks(file(6), 'tasks.csv', { maxRows: 5 }), { code: 'INVALID_TASKS' });
    expect(error.violations).toEqual([
      {
        line: 7,
        message:
          'Too many rows: the file has more than 5 tasks (max_rows): raise max_rows in session.json to read it, or split the tasks into several sessions',
      },
    ]);
  });

  test('blank rows do not count', () => {
    const text = `id,description,role\n\n,,\nA,do,ideator\n,,\nB,do,ideator\n\n`;
    expect(parseTasks(text, 'tasks.csv', { maxRows: 2 }).rows).toHaveLength(2);
  });

  test('readTasksFile takes the same option', () => {
    const dir = buildSession(file(3), { session: null, prefix: 'csv-wave-rows-' });
    expectWaveError(() => readTasksFile(join(dir, 'tasks.csv'), { maxRows: 2 }), { code: 'INVALID_TASKS' });
    expect(readTasksFile(join(dir, 'tasks.csv'), { maxRows: 3 }).rows).toHaveLength(3);
  });
});

describe('the header and line ends', () => {
  test('blank lines before the header are skipped, and lines still count from the top', () => {
    const table = parseTasks('\n  \r\nid,description,role\nA,do,ideator\n');
    expect(table.rows.map((row) => row.line)).toEqual([4]);
    const error = expectWaveError(() => parseTasks('\n\nname,description\n'), { code: 'CSV_MISSING_COLUMN' });
    expect(error.violations).toEqual([{ line: 3, message: 'Missing required column: id' }]);
    // A pipeline's own columns are missed at the same line.
    const brainstorm = expectWaveError(() => withPipelineColumns(parseTasks('\n\nid,description\n'), 'brainstorm', 'tasks.csv'), { code: 'CSV_MISSING_COLUMN' });
    expect(brainstorm.violations).toEqual([{ line: 3, message: 'Missing required column: role (the brainstorm pipeline needs it)' }]);
  });

  test('mixed line ends never leave a CR in a cell', () => {
    const table = parseTasks('id,description,role\nA,do,ideator\r\nB,do,critic\rC,"x\r\ny",ideator\n');
    expect(table.rows.map((row) => [row.id, row.role, row.line])).toEqual([
      ['A', 'ideator', 2],
      ['B', 'critic', 3],
      ['C', 'ideator', 4],
    ]);
    expect(table.rows[2]!.description).toBe('x\r\ny');
  });

  test('several unnamed columns are one message, not one per column', () => {
    const error = expectWaveError(() => parseTasks('id,description,role,,,\n'), { code: 'CSV_MISSING_COLUMN' });
    expect(error.violations.map((v) => v.message)).toEqual([
      'Duplicate column: (no name): name every column, or delete the empty ones',
    ]);
  });
});

describe('session.json', () => {
  function sessionDir(content: string | Buffer): string {
    return buildSession(null, { session: content, prefix: 'csv-wave-session-json-' });
  }

  /** The message of readSessionConfig's error, with the folder taken out. */
  function problem(content: string | Buffer): string {
    const dir = sessionDir(content);
    const error = expectWaveError(() => readSessionConfig(dir), { code: 'INVALID_SESSION' });
    return error.message.replaceAll(join(dir, 'session.json'), 'session.json');
  }

  test.each([
    ['', 'session.json:1:1: not valid JSON: unexpected end of the file'],
    ['   \n', 'session.json:2:1: not valid JSON: unexpected end of the file'],
    ['{"pipeline": "generic",}', 'session.json:1:24: not valid JSON: Expected double-quoted property name'],
    ['{\n  "bom": tru\n}', 'session.json:2:10: not valid JSON: Unexpected token'],
    ['{\r\n  "bom": true\r\n}\r\n}', 'session.json:4:1: not valid JSON: Unexpected non-whitespace character after JSON'],
    ["{'pipeline': 'generic'}", 'session.json:1:2: not valid JSON: Expected property name or \'}\''],
    ['{"topic": "a\nb"}', 'session.json:1:13: not valid JSON: Bad control character in string literal'],
    ['{"executor": {"type": "command" "cmd": "x"}}', 'session.json:1:33: not valid JSON: Expected \',\' or \'}\' after property value'],
  ])('%j', (content, start) => {
    const message = problem(content);
    expect(message.startsWith(start), message).toBe(true);
    expect(message.endsWith(': fix it, or delete session.json to use the defaults')).toBe(true);
    expect(message).not.toContain('\n');
  });

  test('an unknown key with no near name lists the keys there are', () => {
    expect(problem('{\n  "pipeline": "generic",\n  "colour": "blue"\n}')).toMatch(
      /^session\.json:3: Unknown key: colour \(known keys: pipeline, topic, .*max_rows.*\)$/,
    );
  });

  test('a key in the wrong case is a near name', () => {
    expect(problem('{"Pipeline": "generic"}')).toBe('session.json:1: Unknown key: Pipeline (did you mean pipeline?)');
  });

  test('a UTF-8 BOM and CRLF line ends are fine', () => {
    const dir = sessionDir('\uFEFF{\r\n  "pipeline": "generic",\r\n  "max_rows": 10\r\n}\r\n');
    expect(readSessionConfig(dir)).toMatchObject({ pipeline: 'generic', max_rows: 10 });
  });

  test('max_rows must be a positive integer', () => {
    expect(problem('{"max_rows": 1.5}')).toMatch(/^session\.json:1: max_rows: /);
    expect(problem('{"max_rows": -1}')).toMatch(/^session\.json:1: max_rows: /);
  });

  test('a session.json that is a folder is an IO error, not a JSON one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-session-json-'));
    mkdirSync(join(dir, 'session.json'));
    expectWaveError(() => readSessionConfig(dir), { code: 'IO', message: /^Cannot read .*session\.json: / });
    expect(readdirSync(dir)).toEqual(['session.json']);
  });
});
