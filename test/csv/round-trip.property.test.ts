import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { kOutputColumns } from '../../src/csv/columns.js';
import { kTaskColumns, emptyRow, type TaskRow } from '../../src/core/task.js';
import { cellOf, type TasksTable } from '../../src/csv/tasks-table.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';

const kFormulaStarts = ['=', '+', '-', '@', '\t', '\r'];

/** Pieces that break naive CSV writers and spreadsheets, mixed with any NUL-free unicode. */
const kNasty = [
  ...['"', '""', ',', '\r', '\n', '\r\n', ' ', ';'],
  ...kFormulaStarts,
  ...["'", "''"],
  ...['😀', '👩‍👩‍👧', 'é', 'e\u0301', '\u2028', '\uFEFF'],
];
const piece = fc.oneof(
  fc.constantFrom(...kNasty),
  fc.string({ unit: 'binary', maxLength: 6 }).map((text) => text.replaceAll('\0', '')),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);
const cell = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join('')) },
);

/** Seed columns, priority, and columns a person added, some with names that need quoting. */
const kExtraColumns = ['notes', 'owner, team', 'say "hi"'];
const columnsArb = fc
  .shuffledSubarray(['priority', ...kExtraColumns])
  .chain((added) =>
    fc
      .array(fc.nat(kTaskColumns.length), { minLength: added.length, maxLength: added.length })
      .map((positions) => {
        const columns: string[] = [...kTaskColumns];
        added.forEach((name, index) => columns.splice(Math.min(positions[index]!, columns.length), 0, name));
        return columns;
      }),
  );

function rowArb(columns: readonly string[]): fc.Arbitrary<TaskRow> {
  return fc
    .array(cell, { minLength: columns.length, maxLength: columns.length })
    // A row of empty cells is a spreadsheet's blank row, dropped on reading by design.
    .filter((cells) => cells.some((text) => text !== ''))
    .map((cells) => {
      const row = emptyRow();
      columns.forEach((name, index) => {
        if (kExtraColumns.includes(name)) row.extra[name] = cells[index]!;
        else row[name as keyof Omit<TaskRow, 'line' | 'extra'>] = cells[index]!;
      });
      return row;
    });
}

const tableArb: fc.Arbitrary<TasksTable> = columnsArb.chain((columns) =>
  fc.record({
    columns: fc.constant(columns),
    rows: fc.array(rowArb(columns), { maxLength: 6 }),
    format: fc.record({ bom: fc.boolean(), eol: fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n') }),
  }),
);

const cellsOf = (table: TasksTable) => table.rows.map((row) => table.columns.map((name) => cellOf(row, name)));

describe('tasks.csv round trip (property)', () => {
  test('every cell of every column survives serialize → parse unchanged', () => {
    fc.assert(
      fc.property(tableArb, (table) => {
        const text = serializeTasks(table);
        const parsed = parseTasks(text);
        expect(parsed.columns).toEqual(table.columns);
        expect(parsed.format).toEqual(table.format);
        expect(cellsOf(parsed)).toEqual(cellsOf(table));
        expect(serializeTasks(parsed)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  test('no output-column field starts with a formula trigger in the written text', () => {
    fc.assert(
      fc.property(tableArb, (table) => {
        const text = serializeTasks(table);
        const [header, ...records] = parse(text, { bom: true }) as string[][];
        expect(records).toHaveLength(table.rows.length);
        const outputIndexes = kOutputColumns.map((name) => header!.indexOf(name));
        expect(outputIndexes).not.toContain(-1);
        for (const record of records) {
          for (const index of outputIndexes) expect(kFormulaStarts).not.toContain(record[index]!.charAt(0));
        }
      }),
      { numRuns: 300 },
    );
  });

  test('an output cell that starts with a trigger is written guarded and read back as produced', () => {
    const row = emptyRow();
    Object.assign(row, { id: 'A', description: 'd', role: 'r' });
    for (const name of kOutputColumns) row[name] = `=HYPERLINK("http://x", "${name}")`;
    const table: TasksTable = { columns: [...kTaskColumns], rows: [row], format: { bom: false, eol: '\n' } };
    const text = serializeTasks(table);
    const [, record] = parse(text) as string[][];
    const header: readonly string[] = kTaskColumns;
    for (const name of kOutputColumns) {
      expect(record![header.indexOf(name)]).toBe(`'=HYPERLINK("http://x", "${name}")`);
      expect(parseTasks(text).rows[0]![name]).toBe(row[name]);
    }
  });
});
