import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { kTaskColumns, emptyRow } from '../../src/core/task.js';
import type { TasksTable } from '../../src/csv/tasks-table.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { withPipelineColumns } from '../../src/pipelines/pipeline-columns.js';
import { serializeTasks, writeTasksFile } from '../../src/csv/serialize-tasks.js';
import { expectWaveError } from '../helpers/wave-error.js';

const kSeedHeader = kTaskColumns.join(',');

/** A field as csv-wave writes data fields: always double-quoted, quotes doubled. */
const quote = (cell: string) => `"${cell.replaceAll('"', '""')}"`;

/** A seed row: id, description and role set, the other cells as given by name. */
function seedCells(id: string, cells: Partial<Record<(typeof kTaskColumns)[number], string>> = {}): string[] {
  return kTaskColumns.map((column) => {
    if (column in cells) return cells[column]!;
    if (column === 'id') return id;
    if (column === 'description') return `Do ${id}`;
    if (column === 'role') return 'ideator';
    return '';
  });
}

/** A file in the canonical layout: header unquoted, every data field quoted. */
function canonicalFile(header: string, rows: string[][], options: { bom?: boolean; eol?: string } = {}): string {
  const eol = options.eol ?? '\n';
  const lines = [header, ...rows.map((cells) => cells.map(quote).join(','))];
  return `${options.bom === true ? '\uFEFF' : ''}${lines.join(eol)}${eol}`;
}

describe('reading what spreadsheets save', () => {
  test('a UTF-8 BOM is not part of the first column name', () => {
    const table = parseTasks('\uFEFFid,description,role\n"A","Do A","ideator"\n');
    expect(table.columns[0]).toBe('id');
    expect(table.rows.map((row) => row.id)).toEqual(['A']);
    expect(table.format.bom).toBe(true);
  });

  test('CRLF line ends stay out of the cells', () => {
    const table = parseTasks('id,description,role\r\n"A","Do A","ideator"\r\nB,Do B,critic\r\n');
    expect(table.rows.map((row) => [row.id, row.description, row.role])).toEqual([
      ['A', 'Do A', 'ideator'],
      ['B', 'Do B', 'critic'],
    ]);
    expect(table.format.eol).toBe('\r\n');
  });

  test('multi-line cells keep their own line ends, LF or CRLF', () => {
    const lf = parseTasks('id,description,role\n"A","one\ntwo\n\nfour","ideator"\n');
    expect(lf.rows[0]!.description).toBe('one\ntwo\n\nfour');
    const crlf = parseTasks('id,description,role\r\n"A","one\r\ntwo","ideator"\r\n"B","x\ny","critic"\r\n');
    expect(crlf.rows.map((row) => row.description)).toEqual(['one\r\ntwo', 'x\ny']);
  });

  test('blank trailing rows are not tasks', () => {
    expect(parseTasks('id,description,role\n"A","Do A","ideator"\n\n\n').rows).toHaveLength(1);
    expect(parseTasks('id,description,role\r\n"A","Do A","ideator"\r\n\r\n\r\n').rows).toHaveLength(1);
  });

  test('spreadsheet rows of empty cells are not tasks, wherever they are', () => {
    const table = parseTasks('id,description,role\n,,\n"A","Do A","ideator"\n,,\n"","",""\n,,\n');
    expect(table.rows.map((row) => row.id)).toEqual(['A']);
  });

  test('a row with a missing field is still an error, not a blank row', () => {
    expectWaveError(() => parseTasks('id,description,role\n"A","Do A"\n'), { code: 'CSV_PARSE' });
  });
});

describe('row.line is the file line where the row starts', () => {
  const cases: { name: string; text: string; lines: number[] }[] = [
    { name: 'plain LF', text: 'id,description,role\nA,d,r\nB,d,r\n', lines: [2, 3] },
    { name: 'plain CRLF', text: 'id,description,role\r\nA,d,r\r\nB,d,r\r\n', lines: [2, 3] },
    { name: 'after a BOM', text: '\uFEFFid,description,role\nA,d,r\nB,d,r\n', lines: [2, 3] },
    { name: 'after an LF multi-line cell', text: 'id,description,role\nA,"1\n2\n3",r\nB,d,r\n', lines: [2, 5] },
    {
      name: 'after a CRLF multi-line cell in a CRLF file',
      text: 'id,description,role\r\nA,"1\r\n2\r\n3",r\r\nB,d,r\r\n',
      lines: [2, 5],
    },
    { name: 'after a CRLF cell in an LF file', text: 'id,description,role\nA,"1\r\n2",r\nB,d,r\n', lines: [2, 4] },
    { name: 'after an LF cell in a CRLF file', text: 'id,description,role\r\nA,"1\n2",r\r\nB,d,r\r\n', lines: [2, 4] },
    { name: 'after blank lines', text: 'id,description,role\n\n\nA,d,r\n\nB,d,r\n', lines: [4, 6] },
    { name: 'after blank CRLF lines', text: 'id,description,role\r\n\r\nA,d,r\r\n\r\n\r\nB,d,r\r\n', lines: [3, 6] },
    {
      name: 'after a cell ending in blank lines, then blank lines',
      text: 'id,description,role\nA,"x\n\n",r\n\nB,d,r\n',
      lines: [2, 6],
    },
    { name: 'after a row of empty cells', text: 'id,description,role\nA,d,r\n,,\nB,d,r\n', lines: [2, 4] },
    { name: 'with non-ASCII text before', text: 'id,description,role\nA,"é😀\nü",r\nB,d,r\n', lines: [2, 4] },
  ];
  test.each(cases)('$name', ({ text, lines }) => {
    expect(parseTasks(text).rows.map((row) => row.line)).toEqual(lines);
  });

  test('a ragged row is reported at the line where it starts', () => {
    const error = expectWaveError(() => parseTasks('id,description,role\r\nA,"1\r\n2",r\r\nB,d\r\n'), {
      code: 'CSV_PARSE',
    });
    expect(error.violations.map((violation) => violation.line)).toEqual([4]);
  });

  test('any mix of multi-line cells and blank lines (property)', () => {
    const cell = fc
      .array(fc.constantFrom('a', 'é', '😀', ',', '""', '\n', '\r\n', ' '), { maxLength: 6 })
      .map((parts) => parts.join(''));
    const row = fc.record({ description: cell, blanksBefore: fc.nat(3) });
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 8 }), fc.constantFrom('\n', '\r\n'), (rows, eol) => {
        let text = `id,description,role${eol}`;
        let line = 2;
        const expected: number[] = [];
        rows.forEach((r, index) => {
          text += eol.repeat(r.blanksBefore);
          line += r.blanksBefore;
          expected.push(line);
          text += `"T${index}",${quote(r.description)},"r"${eol}`;
          line += 1 + (r.description.match(/\r\n|\n/g)?.length ?? 0);
        });
        expect(parseTasks(text).rows.map((parsed) => parsed.line)).toEqual(expected);
      }),
    );
  });
});

describe('columns', () => {
  const header = `priority,${kTaskColumns.slice(0, 5).join(',')},Notes,${kTaskColumns.slice(5).join(',')},owner`;
  const seed = seedCells('A');
  const rowCells = ['P0', ...seed.slice(0, 5), ' keep  "this", as is\n', ...seed.slice(5), '=SUM(A1:A3)'];

  test('priority and extra columns keep their place and their cells verbatim', () => {
    const text = canonicalFile(header, [rowCells]);
    const table = parseTasks(text);
    expect(table.columns).toEqual(header.split(','));
    const row = table.rows[0]!;
    expect(row.priority).toBe('P0');
    expect(row.extra).toEqual({ Notes: ' keep  "this", as is\n', owner: '=SUM(A1:A3)' });
    expect(serializeTasks(table)).toBe(text);
  });

  test('a plain batch gets only the columns a run writes; a seed pipeline every missing seed column, at the end, in seed order', () => {
    const text = 'notes,role,id,description,priority\n"n","ideator","A","Do A","P2"\n';
    expect(parseTasks(text).columns).toEqual(['notes', 'role', 'id', 'description', 'priority']);
    expect(withPipelineColumns(parseTasks(text), 'generic', 'tasks.csv').columns).toEqual(['notes', 'role', 'id', 'description', 'priority', 'wave', 'status', 'findings', 'error']);
    const table = withPipelineColumns(parseTasks(text), 'brainstorm', 'tasks.csv');
    const missing = kTaskColumns.filter((column) => !['role', 'id', 'description'].includes(column));
    expect(table.columns).toEqual(['notes', 'role', 'id', 'description', 'priority', ...missing]);
    const written = serializeTasks(table);
    expect(written.split('\n')[0]).toBe(['notes', 'role', 'id', 'description', 'priority', ...missing].join(','));
    const reread = parseTasks(written);
    expect(reread.rows[0]!.extra).toEqual({ notes: 'n' });
    expect(reread.rows[0]!.priority).toBe('P2');
    expect(reread.rows[0]!.wave).toBe('');
  });

  test('a file without the priority column does not gain one', () => {
    const table = parseTasks(canonicalFile(kSeedHeader, [seedCells('A')]));
    expect(table.columns).toEqual([...kTaskColumns]);
    expect(serializeTasks(table).split('\n')[0]).toBe(kSeedHeader);
  });
});

describe('serialize(parse(x)) === x for a canonical file', () => {
  const rows = [
    seedCells('IDEA-001', { angle: 'Technical;Product', findings: 'Three ideas:\n1. a\n2. "b", c' }),
    seedCells('IDEA-002', { status: 'completed', findings: "'=HYPERLINK(\"x\")", error: "'-1 is not allowed" }),
    seedCells('GC-001', { deps: 'IDEA-001;IDEA-002', exec_mode: 'interactive', wave: '2', gc_signal: "''quoted" }),
    seedCells('EVAL-001', { description: 'multi\r\nline\r\n', severity_summary: "'@mention", title: '😀 émoji' }),
  ];
  const layouts = [
    { name: 'LF, no BOM', bom: false, eol: '\n' },
    { name: 'LF, BOM', bom: true, eol: '\n' },
    { name: 'CRLF, no BOM', bom: false, eol: '\r\n' },
    { name: 'CRLF, BOM', bom: true, eol: '\r\n' },
  ];
  test.each(layouts)('$name', ({ bom, eol }) => {
    const text = canonicalFile(kSeedHeader, rows, { bom, eol });
    const table = parseTasks(text);
    expect(table.format).toEqual({ bom, eol });
    expect(serializeTasks(table)).toBe(text);
  });

  test('with priority and extra columns', () => {
    const text = canonicalFile(`${kSeedHeader},priority,reviewer`, [
      [...seedCells('A'), 'P0', 'ana'],
      [...seedCells('B'), '', ''],
    ]);
    expect(serializeTasks(parseTasks(text))).toBe(text);
  });

  test('a header that needs quoting stays quoted', () => {
    const text = canonicalFile(`${kSeedHeader},"notes, misc"`, [[...seedCells('A'), 'n']]);
    const table = parseTasks(text);
    expect(table.columns.at(-1)).toBe('notes, misc');
    expect(serializeTasks(table)).toBe(text);
  });

  test('the brainstorm sample', () => {
    const text = readFileSync(new URL('../../samples/brainstorm/tasks.csv', import.meta.url), 'utf8');
    expect(serializeTasks(parseTasks(text))).toBe(text);
  });
});

describe('writeTasksFile', () => {
  function table(): TasksTable {
    const rows = ['A', 'B', 'C'].map((id) => {
      const row = emptyRow();
      row.id = id;
      row.description = `Do ${id}\nwith a second line`;
      row.role = 'ideator';
      row.findings = `=result of ${id}`;
      return row;
    });
    return { columns: [...kTaskColumns], rows, format: { bom: false, eol: '\n' } };
  }

  test('writes the whole file and leaves no temporary file behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-write-'));
    const path = join(dir, 'tasks.csv');
    writeFileSync(path, 'old content that is longer than nothing\n'.repeat(100));
    writeTasksFile(path, table());
    expect(readdirSync(dir)).toEqual(['tasks.csv']);
    expect(readFileSync(path, 'utf8')).toBe(serializeTasks(table()));
    expect(parseTasks(readFileSync(path, 'utf8')).rows.map((row) => row.findings)).toEqual([
      '=result of A',
      '=result of B',
      '=result of C',
    ]);
  });

  // root may write into a read-only folder, so the case proves nothing there.
  const isRoot = process.getuid?.() === 0;
  test.skipIf(isRoot)('a failed write leaves the old file untouched', () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-write-'));
    const folder = join(dir, 'session');
    mkdirSync(folder);
    const path = join(folder, 'tasks.csv');
    const old = canonicalFile(kSeedHeader, [seedCells('OLD')]);
    writeFileSync(path, old);
    chmodSync(folder, 0o555);
    try {
      expectWaveError(() => writeTasksFile(path, table()), { code: 'IO', message: /Cannot write/ });
    } finally {
      chmodSync(folder, 0o755);
    }
    expect(readFileSync(path, 'utf8')).toBe(old);
    expect(readdirSync(folder)).toEqual(['tasks.csv']);
  });
});
