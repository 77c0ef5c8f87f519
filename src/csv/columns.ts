import { kKnownColumns, kTaskColumns, type KnownColumn, type SeedColumn } from '../core/task.js';

/**
 * The column without which no row is a task; the others default to empty. A pipeline asks
 * for more (the seeds' pipelines: a description and a role): pipelines/pipeline-columns.ts.
 */
export const kRequiredColumns: readonly SeedColumn[] = ['id'];

/**
 * Columns the engine fills from task output. Their cells are guarded against formula
 * injection when written and unguarded when read (see formula-guard.ts). The `route` cell
 * is output too, but only ever a branch name (schema/row.ts): it needs no guard.
 */
export const kOutputColumns: readonly KnownColumn[] = ['findings', 'gc_signal', 'severity_summary', 'error'];

/**
 * The most characters a spreadsheet cell holds (Excel, LibreOffice Calc). A longer cell is
 * cut when the file is opened, and the cut is saved with the next save.
 */
export const kSpreadsheetCellLimit = 32_767;

/**
 * The columns of `wave-<N>.csv` (DESIGN.md section 4): the task's own columns up to `wave`
 * (none of the outcome), then the context it runs with.
 */
export const kWaveFileColumns: readonly (SeedColumn | 'prev_context')[] = [
  ...kTaskColumns.slice(0, kTaskColumns.indexOf('wave') + 1),
  'prev_context',
];

const kKnown = new Set<string>(kKnownColumns);

export function isKnownColumn(name: string): name is KnownColumn {
  return kKnown.has(name);
}

/** Longest value shown whole in a message; a longer one is cut, with its length. */
const kShownLength = 100;

/**
 * Characters a reader cannot see, or that would break a one-line message: controls,
 * format characters (zero-width, bidi), lone surrogates, line separators and every
 * white space but the plain space.
 */
const kInvisible = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]|[^\S ]/u;

/**
 * A cell as a message shows it: as is when every character is plain to see; otherwise in
 * double quotes with escapes (`"a\tb"`, `"A "`, `"x\u200By"`), so that a tab, a trailing
 * space or a zero-width character in an id is visible, and a line break cannot split the
 * message. Past 100 characters it is cut, and its length is said.
 */
export function showCell(cell: string): string {
  let cut = cell.length > kShownLength ? cell.slice(0, kShownLength) : cell;
  if (cut.length < cell.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const odd = kInvisible.test(cut) || cut !== cut.trim();
  const shown = odd ? quoteWithEscapes(cut) : cut;
  return cut.length < cell.length ? `${shown}… (${formatCount(cell.length)} characters)` : shown;
}

const kEscapes: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function quoteWithEscapes(text: string): string {
  let out = '"';
  for (const char of text) {
    const escape = kEscapes[char];
    if (escape !== undefined) out += escape;
    else if (kInvisible.test(char)) out += unicodeEscape(char.codePointAt(0)!);
    else out += char;
  }
  return `${out}"`;
}

/** `\u200B`, or `\u{E0001}` beyond the first plane, as JavaScript writes them. */
function unicodeEscape(code: number): string {
  const hex = code.toString(16).toUpperCase();
  return code > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/** 32767 → `32,767`: counts in messages, grouped the same way on every machine. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
