import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { downstream } from '../graph/cascade.js';
import { buildDag } from '../graph/dag.js';

/**
 * The tasks of a pipeline loop (rows of these roles) downstream of the given ones through
 * the loop alone, in file order: what an earlier decision of a loop task appended below it.
 */
export function loopTasksBelow(rows: readonly TaskRow[], roles: ReadonlySet<string>, ids: Iterable<string>): TaskRow[] {
  const loop = rows.filter((row) => roles.has(row.role));
  const below = downstream(buildDag(loop.map((row) => ({ id: row.id, deps: splitList(row.deps) }))), ids);
  return loop.filter((row) => below.has(row.id));
}
