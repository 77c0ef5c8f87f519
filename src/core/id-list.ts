/**
 * Splits a `;`-separated cell (deps, context_from, angle). Stray spaces and empty items
 * (a trailing `;`) are tolerated and dropped, as spreadsheets and people leave them.
 */
export function splitList(cell: string): string[] {
  if (cell === '') return [];
  const items: string[] = [];
  for (const part of cell.split(';')) {
    const item = part.trim();
    if (item !== '') items.push(item);
  }
  return items;
}
