/**
 * Corpus cases whose files are awkward to keep in the repository: bytes that are not UTF-8
 * text (an editor or git would "fix" them), and files of many megabytes. Each is built
 * here at test time and runs through the same checks as a stored `<name>.csv` /
 * `<name>.expected` pair (see corpus.test.ts). Byte offsets in expected lines are found
 * with indexOf on the bytes built here, not computed the way csv-wave computes them.
 */
import { kTaskColumns } from '../../src/core/task.js';

/** The longest dependency chain validated: a chain of tasks is a chain of waves. */
const kChainLength = process.env['CI'] ? 50_000 : 200_000;

export interface GeneratedCase {
  name: string;
  /** 2: `validate` must fail with exactly `expected` on stderr. 0: it must pass, printing `expected` on stdout. */
  code: 0 | 2;
  /** Built when the case runs, so that the big files are not all held at once. */
  build: () => { tasks: Buffer; session?: Buffer; expected: string[] };
}

const kHeader = kTaskColumns.join(',');
const kSaveAsUtf8 = 'save the file as UTF-8 (in a spreadsheet: "CSV UTF-8")';

/** A seed row with every field quoted: id, description and role set, other cells by name. */
function row(id: string, cells: Partial<Record<(typeof kTaskColumns)[number], string>> = {}): string {
  return kTaskColumns
    .map((column) => {
      const cell = cells[column] ?? (column === 'id' ? id : column === 'description' ? `do ${id}` : column === 'role' ? 'ideator' : '');
      return `"${cell.replaceAll('"', '""')}"`;
    })
    .join(',');
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** A file of the seed header and these rows, one per line (LF). */
function file(rows: readonly string[]): Buffer {
  return utf8(`${[kHeader, ...rows].join('\n')}\n`);
}

/** The offset of the first `marker` in bytes, failing loudly when it is absent. */
function offsetOf(bytes: Buffer, marker: Buffer | number): number {
  const at = bytes.indexOf(marker);
  if (at === -1) throw new Error('marker not found in a generated case');
  return at;
}

export const kGeneratedCases: GeneratedCase[] = [
  {
    name: 'nul-byte-in-quoted-cell',
    code: 2,
    build: () => {
      const tasks = file([row('A'), row('B', { description: 'do\0it' })]);
      return {
        tasks,
        expected: [
          `tasks.csv:3: NUL byte at byte ${offsetOf(tasks, 0)}: a text file holds none (UTF-16 and binary files do); ${kSaveAsUtf8}`,
        ],
      };
    },
  },
  {
    name: 'nul-byte-in-header',
    code: 2,
    build: () => ({
      tasks: utf8(`id,description,role\0\nA,do it,ideator\n`),
      expected: [`tasks.csv:1: NUL byte at byte 19: a text file holds none (UTF-16 and binary files do); ${kSaveAsUtf8}`],
    }),
  },
  {
    name: 'utf16-with-bom',
    code: 2,
    build: () => ({
      tasks: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${kHeader}\n${row('A')}\n`, 'utf16le')]),
      expected: [
        'tasks.csv:1: The file is UTF-16 (it starts with the bytes 0xFF 0xFE): save it as UTF-8 (in a spreadsheet: "CSV UTF-8")',
      ],
    }),
  },
  {
    name: 'utf16-big-endian-with-bom',
    code: 2,
    build: () => ({
      tasks: Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(`${kHeader}\n`, 'utf16le').swap16()]),
      expected: [
        'tasks.csv:1: The file is UTF-16 (it starts with the bytes 0xFE 0xFF): save it as UTF-8 (in a spreadsheet: "CSV UTF-8")',
      ],
    }),
  },
  {
    name: 'utf16-without-bom',
    code: 2,
    build: () => ({
      tasks: Buffer.from(`${kHeader}\n${row('A')}\n`, 'utf16le'),
      expected: [`tasks.csv:1: NUL byte at byte 1: a text file holds none (UTF-16 and binary files do); ${kSaveAsUtf8}`],
    }),
  },
  {
    name: 'latin1-file',
    code: 2,
    build: () => {
      const tasks = Buffer.from(`${kHeader}\n${row('A', { title: 'Plain' })}\n${row('B', { description: 'Café crème' })}\n`, 'latin1');
      const at = offsetOf(tasks, 0xe9);
      return { tasks, expected: [`tasks.csv:3: Invalid UTF-8 at byte ${at} (0xE9, "é" in Latin-1/Windows-1252): ${kSaveAsUtf8}`] };
    },
  },
  {
    name: 'windows-1252-smart-quotes',
    code: 2,
    build: () => {
      // "say “hi”" as Windows-1252 writes it: 0x93 and 0x94 around the word (latin1 here
      // maps U+0093 and U+0094 to those bytes, and ASCII to itself).
      const tasks = Buffer.from(`${kHeader}\n${row('A', { description: 'say \u0093hi\u0094' })}\n`, 'latin1');
      return {
        tasks,
        expected: [`tasks.csv:2: Invalid UTF-8 at byte ${offsetOf(tasks, 0x93)} (0x93, "“" in Latin-1/Windows-1252): ${kSaveAsUtf8}`],
      };
    },
  },
  {
    name: 'invalid-utf8-after-good-utf8',
    code: 2,
    build: () => {
      const tasks = Buffer.concat([file([row('A', { title: 'Crème brûlée' })]), utf8(`"B","","do B `), Buffer.from([0xff]), utf8(`","ideator"${',""'.repeat(11)}\n`)]);
      return { tasks, expected: [`tasks.csv:3: Invalid UTF-8 at byte ${offsetOf(tasks, 0xff)} (0xFF): ${kSaveAsUtf8}`] };
    },
  },
  {
    name: 'utf8-encoded-surrogate',
    code: 2,
    build: () => {
      // CESU-8 / WTF-8 write a lone surrogate as ED A0 80; UTF-8 forbids it.
      const tasks = Buffer.concat([utf8(`${kHeader}\n"A","é","do `), Buffer.from([0xed, 0xa0, 0x80]), utf8(`","ideator"${',""'.repeat(11)}\n`)]);
      return { tasks, expected: [`tasks.csv:2: Invalid UTF-8 at byte ${offsetOf(tasks, 0xed)} (0xED): ${kSaveAsUtf8}`] };
    },
  },
  {
    name: 'utf8-overlong-slash',
    code: 2,
    build: () => {
      // C0 AF is an overlong "/": the classic way to sneak a path separator past a check.
      const tasks = Buffer.concat([utf8(`${kHeader}\n"A`), Buffer.from([0xc0, 0xaf]), utf8(`B","","do it","ideator"${',""'.repeat(11)}\n`)]);
      return {
        tasks,
        expected: [`tasks.csv:2: Invalid UTF-8 at byte ${offsetOf(tasks, 0xc0)} (0xC0, "À" in Latin-1/Windows-1252): ${kSaveAsUtf8}`],
      };
    },
  },
  {
    name: 'utf8-cut-at-end-of-file',
    code: 2,
    build: () => {
      // A copy cut short in the middle of "€" (E2 82 AC).
      const tasks = Buffer.concat([file([row('A', { title: '½ done' })]), utf8('"B","€'), Buffer.from([0xe2, 0x82])]);
      return { tasks, expected: [`tasks.csv:3: Invalid UTF-8 at byte ${tasks.length - 2} (0xE2): ${kSaveAsUtf8}`] };
    },
  },
  {
    name: 'session-json-latin1',
    code: 2,
    build: () => ({
      tasks: file([row('A')]),
      session: Buffer.from('{\n  "topic": "Café"\n}\n', 'latin1'),
      expected: [`session.json:2: Invalid UTF-8 at byte 17 (0xE9, "é" in Latin-1/Windows-1252): ${kSaveAsUtf8}`],
    }),
  },
  {
    name: 'cell-10-mb',
    code: 2,
    build: () => ({
      tasks: file([row('A'), row('B', { description: 'x'.repeat(10_000_000) }), row('C')]),
      expected: [
        'tasks.csv:3: Cell too long in column description: 10,000,000 characters, more than the 32,767 a spreadsheet cell holds: move the text into a file and refer to it',
      ],
    }),
  },
  {
    name: 'cell-32768-in-own-column',
    code: 2,
    build: () => ({
      tasks: utf8(`${kHeader},notes\n${row('A')},"${'é'.repeat(32_768)}"\n`),
      expected: [
        'tasks.csv:2: Cell too long in column notes: 32,768 characters, more than the 32,767 a spreadsheet cell holds: move the text into a file and refer to it',
      ],
    }),
  },
  {
    name: 'cycle-1000',
    code: 2,
    build: () => {
      const ids = Array.from({ length: 1000 }, (_, i) => `C${String(i).padStart(4, '0')}`);
      const rows = ids.map((id, i) => row(id, { deps: ids[(i + 1) % ids.length]! }));
      return { tasks: file([row('FREE'), ...rows]), expected: [`tasks.csv:3: Circular dependency detected involving: ${ids.join(';')}`] };
    },
  },
  {
    name: 'cell-32767',
    code: 0,
    build: () => ({ tasks: file([row('A', { description: 'x'.repeat(32_767) })]), expected: ['OK: 1 tasks, 1 waves'] }),
  },
  {
    name: 'columns-10000',
    code: 0,
    build: () => {
      const extras = Array.from({ length: 10_000 - kTaskColumns.length }, (_, i) => `extra_${i}`);
      const cells = extras.map((_, i) => `"v${i}"`).join(',');
      return {
        tasks: utf8(`${kHeader},${extras.join(',')}\n${row('A')},${cells}\n${row('B', { deps: 'A' })},${cells}\n`),
        expected: ['OK: 2 tasks, 2 waves'],
      };
    },
  },
  {
    // Far deeper than any recursion's stack either way; under CI it is sized for a loaded
    // box (200,000 took 130 s there at a load of 38), elsewhere as before.
    name: `chain-${kChainLength}`,
    code: 0,
    build: () => {
      const rows = [row('T0')];
      for (let i = 1; i < kChainLength; i++) rows.push(row(`T${i}`, { deps: `T${i - 1}` }));
      return { tasks: file(rows), expected: [`OK: ${kChainLength} tasks, ${kChainLength} waves`] };
    },
  },
];
