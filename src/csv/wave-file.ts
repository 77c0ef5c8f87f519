import { kWaveFileColumns } from './columns.js';
import { guardCell } from '../text/formula-guard.js';
import { stringifyRecords } from './serialize-tasks.js';
import type { FileFormat } from './tasks-table.js';
import type { TaskRow } from '../core/task.js';

/**
 * The text of `wave-<N>.csv`: the wave's csv-wave rows with their prev_context
 * (DESIGN.md section 4). prev_context is built from task output, so it is guarded
 * against formula injection like the output columns of tasks.csv.
 */
export function serializeWaveFile(rows: readonly { row: TaskRow; prevContext: string }[], format: FileFormat): string {
  const records = rows.map(({ row, prevContext }) =>
    kWaveFileColumns.map((column) => (column === 'prev_context' ? guardCell(prevContext) : row[column])),
  );
  return stringifyRecords(kWaveFileColumns, records, format);
}
