import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { WaveError } from '../errors.js';
import { buildDag } from '../graph/dag.js';
import { downstream } from '../graph/cascade.js';
import { revisionRow } from '../pipelines/revision-row.js';
import { resetTasks } from './rerun.js';

export interface RevisePlan {
  revision: TaskRow;
  /** Direct dependents of the task, now depending on the revision. */
  rewired: string[];
  /** Every task reset to pending: the rewired ones and all downstream of them. */
  reset: string[];
}

/**
 * `revise` (seed 003): a revision task for one task, carrying the feedback; the task's
 * dependents depend on the revision instead, and they and everything downstream of them
 * go back to pending. The original keeps its result.
 */
export function planRevision(rows: readonly TaskRow[], taskId: string, feedback: string): RevisePlan {
  const original = rows.find((row) => row.id === taskId);
  if (!original) throw new WaveError('USAGE', `revise: no task ${taskId} in tasks.csv`);
  if (feedback.trim() === '') throw new WaveError('USAGE', 'revise needs --feedback TEXT');
  const revision = revisionRow(original, feedback, rows.map((row) => row.id));
  const rewired = rows.filter((row) => splitList(row.deps).includes(taskId)).map((row) => row.id);
  const graph = buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) })));
  const below = downstream(graph, rewired);
  const reset = rows.filter((row) => rewired.includes(row.id) || below.has(row.id)).map((row) => row.id);
  return { revision, rewired, reset };
}

/**
 * Applies a revision plan to the rows (in place; the revision is appended). Every task
 * reset that read the original's findings (context_from) reads the revision's next to them.
 */
export function applyRevision(rows: TaskRow[], taskId: string, plan: RevisePlan): void {
  const rewired = new Set(plan.rewired);
  const reset = new Set(plan.reset);
  const revisionId = plan.revision.id;
  for (const row of rows) {
    if (rewired.has(row.id)) {
      row.deps = splitList(row.deps)
        .map((dep) => (dep === taskId ? revisionId : dep))
        .join(';');
    }
    if (!reset.has(row.id)) continue;
    const context = splitList(row.context_from);
    if (context.includes(revisionId)) continue;
    const at = context.indexOf(taskId);
    if (at < 0 && !rewired.has(row.id)) continue;
    context.splice(at < 0 ? context.length : at + 1, 0, revisionId);
    row.context_from = context.join(';');
  }
  resetTasks(rows, plan.reset);
  rows.push(plan.revision);
}
