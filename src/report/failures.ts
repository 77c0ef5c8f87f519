import { splitList } from '../core/id-list.js';
import type { TaskRow } from '../core/task.js';
import { skippedForFailure, statusOf } from '../core/skip-cause.js';

/** Failed tasks with the same error class and message, or tasks skipped because of the same failed task. */
export interface FailureGroup {
  kind: 'failed' | 'skipped';
  /** The error class (failed), or empty. */
  errorClass: string;
  /** The error message (failed), or the id of the root failed task (skipped). */
  message: string;
  tasks: string[];
}

/** Roots named per skipped task at most: a wide failure would otherwise repeat in every group. */
const kMaxRoots = 3;

/**
 * Failures grouped by error class and message, most tasks first; then, for each failed
 * (or blocking) task, the tasks skipped because of it. `classOf` gives a task's error
 * class from its last attempt.
 */
export function groupFailures(rows: readonly TaskRow[], classOf: (id: string) => string): FailureGroup[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const failed = new Map<string, FailureGroup>();
  for (const row of rows) {
    if (statusOf(row) !== 'failed') continue;
    const errorClass = classOf(row.id);
    const key = `${errorClass}\u0000${row.error}`;
    const group = failed.get(key) ?? { kind: 'failed' as const, errorClass, message: row.error, tasks: [] };
    group.tasks.push(row.id);
    failed.set(key, group);
  }

  // The root failures of a skipped task: failed tasks reached through deps that were skipped for failure.
  const roots = new Map<string, string[]>();
  const rootsOf = (start: TaskRow): string[] => {
    const known = roots.get(start.id);
    if (known) return known;
    // Iterative: a chain of skipped tasks may be long. A cycle (a file that would not validate) ends the walk.
    const stack: TaskRow[] = [start];
    const onStack = new Set<string>([start.id]);
    while (stack.length > 0) {
      const row = stack[stack.length - 1]!;
      const pending = splitList(row.deps)
        .map((id) => byId.get(id))
        .filter((dep): dep is TaskRow => dep !== undefined && skippedForFailure(dep) && !roots.has(dep.id) && !onStack.has(dep.id));
      if (pending.length > 0) {
        for (const dep of pending) onStack.add(dep.id);
        stack.push(...pending);
        continue;
      }
      stack.pop();
      onStack.delete(row.id);
      const found = new Set<string>();
      for (const id of splitList(row.deps)) {
        const dep = byId.get(id);
        if (!dep) continue;
        if (statusOf(dep) === 'failed' || (statusOf(dep) === 'completed' && row.error.startsWith('Blocked'))) found.add(id);
        else if (skippedForFailure(dep)) for (const root of roots.get(id) ?? []) found.add(root);
        if (found.size >= kMaxRoots) break;
      }
      roots.set(row.id, [...found].slice(0, kMaxRoots));
    }
    return roots.get(start.id) ?? [];
  };

  const skipped = new Map<string, FailureGroup>();
  for (const row of rows) {
    if (!skippedForFailure(row)) continue;
    const found = rootsOf(row);
    for (const root of found.length > 0 ? found : ['']) {
      const group = skipped.get(root) ?? { kind: 'skipped' as const, errorClass: '', message: root, tasks: [] };
      group.tasks.push(row.id);
      skipped.set(root, group);
    }
  }
  const bySize = (a: FailureGroup, b: FailureGroup) => b.tasks.length - a.tasks.length;
  return [...[...failed.values()].sort(bySize), ...[...skipped.values()].sort(bySize)];
}
