/**
 * Spreadsheets run a cell that starts with `=`, `+`, `-`, `@`, TAB or CR as a formula
 * (CSV injection). Cells the engine writes from task output get a leading apostrophe when
 * they start with one of those, or with an apostrophe itself, so that the guard can be
 * removed exactly when the file is read back: guard and unguard are inverses.
 */
const kDangerousFirst = new Set(['=', '+', '-', '@', '\t', '\r', "'"]);

export function guardCell(text: string): string {
  return text.length > 0 && kDangerousFirst.has(text[0]!) ? `'${text}` : text;
}

export function unguardCell(cell: string): string {
  return cell.startsWith("'") ? cell.slice(1) : cell;
}
