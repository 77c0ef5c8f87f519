import { kSpreadsheetCellLimit } from '../csv/columns.js';
import type { TaskRow } from '../core/task.js';
import { WaveError } from '../errors.js';
import { newRow } from './new-row.js';
import { nextId, splitId } from './task-ids.js';

/**
 * A revision of `original` carrying `feedback` (seed 003's `revise <TASK-ID> [feedback]`):
 * the next id of its prefix (`DRAFT-004`), or `<id>-rev-N`; its role, angle and priority;
 * one GC round more; after it and reading it. `csv-wave revise` and the quality gate make
 * it the same way. Throws WaveError USAGE when the description would not fit a cell.
 */
export function revisionRow(original: TaskRow, feedback: string, ids: readonly string[]): TaskRow {
  const taskId = original.id;
  const description = `Revise the output of ${taskId} with this feedback: ${feedback.trim()}\n\nThe original task: ${original.description}`;
  if (description.length > kSpreadsheetCellLimit) {
    throw new WaveError(
      'USAGE',
      `revise: the feedback makes the revision's description ${description.length} characters long; a cell holds at most ${kSpreadsheetCellLimit} (spreadsheets cut longer ones). Shorten the feedback, or put it in a file the task reads.`,
    );
  }
  const parts = splitId(taskId);
  let id = parts ? nextId(parts.prefix, ids) : `${taskId}-rev-1`;
  for (let n = 2; !parts && ids.includes(id); n++) id = `${taskId}-rev-${n}`;
  return newRow({
    id,
    title: `Revise ${taskId}${original.title === '' ? '' : `: ${original.title}`}`,
    description,
    role: original.role,
    angle: original.angle,
    gc_round: String(Number(original.gc_round || '0') + 1),
    deps: taskId,
    context_from: taskId,
    priority: original.priority,
  });
}
