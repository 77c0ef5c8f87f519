import type { TaskDag } from './dag.js';

/** Every task downstream of the given ones (their transitive dependents), not counting them. */
export function downstream(graph: TaskDag, ids: Iterable<string>): Set<string> {
  const start = new Set(ids);
  const found = new Set<string>();
  const queue = [...start];
  for (let head = 0; head < queue.length; head++) {
    for (const successor of graph.successors(queue[head]!) ?? []) {
      if (found.has(successor) || start.has(successor)) continue;
      found.add(successor);
      queue.push(successor);
    }
  }
  return found;
}
