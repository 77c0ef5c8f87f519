import { kKnownColumns } from '../core/task.js';
import { cellReader, type TasksTable } from '../csv/tasks-table.js';
import { WaveError } from '../errors.js';
import { missingColumns, type RequiredColumns } from '../csv/parse-tasks.js';
import { pipelineFor } from './pipeline-for.js';
import type { PipelineName } from '../schema/session.js';

/**
 * tasks.csv's columns as its pipeline wants them: refused (CSV_MISSING_COLUMN, at the
 * header's line) when it lacks one the pipeline requires; otherwise the columns a run
 * writes are added after the file's own, in the seed's order. A plain batch keeps its own
 * columns and gets only wave, status, findings and error. `require: false` (status, the
 * report: they show any file) adds the columns without refusing.
 */
export function withPipelineColumns(table: TasksTable, pipeline: PipelineName, path: string, require = true): TasksTable {
  const { written } = pipelineFor(pipeline).columns;
  const present = new Set(table.columns);
  const violations = missingColumns(present, requiredColumns(pipeline), table.headerLine ?? 1);
  if (require && violations.length > 0) throw new WaveError('CSV_MISSING_COLUMN', violations[0]!.message, { path, violations });
  for (const column of written) if (!present.has(column)) table.columns.push(column);
  return table;
}

/** The columns a pipeline's tasks.csv must have, as a reader checks them (ReadOptions.required): a save during a run too. */
export function requiredColumns(pipeline: PipelineName): RequiredColumns {
  return { columns: pipelineFor(pipeline).columns.required, by: `the ${pipeline} pipeline` };
}

/**
 * Adds the known columns the file lacks but some row now fills (a generic challenger's
 * gc_signal, a revision's deps): without the column its cell would not reach the file.
 * Called before each write; a column once added stays.
 */
export function addFilledColumns(table: TasksTable): void {
  const present = new Set(table.columns);
  for (const column of kKnownColumns) {
    if (present.has(column)) continue;
    const cell = cellReader(column);
    if (table.rows.some((row) => cell(row) !== '')) table.columns.push(column);
  }
}
