import type { TaskRow } from './task.js';

/** Sets every row's wave cell from the computed waves. Returns whether a cell changed. */
export function fillWaveColumn(rows: readonly TaskRow[], waves: ReadonlyMap<string, number>): boolean {
  let changed = false;
  for (const row of rows) {
    const wave = String(waves.get(row.id));
    if (row.wave !== wave) {
      row.wave = wave;
      changed = true;
    }
  }
  return changed;
}
