/** The columns of the master tasks.csv, in the seed's order (DESIGN.md section 2). */
export const kTaskColumns = [
  'id',
  'title',
  'description',
  'role',
  'angle',
  'gc_round',
  'deps',
  'context_from',
  'exec_mode',
  'wave',
  'status',
  'findings',
  'gc_signal',
  'severity_summary',
  'error',
] as const;

/** Optional input column that may follow the seed's columns. */
export const kPriorityColumn = 'priority';

export type SeedColumn = (typeof kTaskColumns)[number];
export type KnownColumn = SeedColumn | typeof kPriorityColumn;

/** Columns without which no task can be understood; the others default to empty. */
export const kRequiredColumns: readonly SeedColumn[] = ['id', 'description', 'role'];

/**
 * Columns the engine fills from task output. Their cells are guarded against formula
 * injection when written and unguarded when read (see formula-guard.ts).
 */
export const kOutputColumns: readonly KnownColumn[] = ['findings', 'gc_signal', 'severity_summary', 'error'];

/** The columns of `wave-<N>.csv` (DESIGN.md section 4). */
export const kWaveFileColumns = [
  'id',
  'title',
  'description',
  'role',
  'angle',
  'gc_round',
  'deps',
  'context_from',
  'exec_mode',
  'wave',
  'prev_context',
] as const;

const kKnown = new Set<string>([...kTaskColumns, kPriorityColumn]);

export function isKnownColumn(name: string): name is KnownColumn {
  return kKnown.has(name);
}

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
