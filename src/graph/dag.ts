import { Graph } from '@dagrejs/graphlib';

/** The minimum the graph needs of a task. */
export interface GraphTask {
  id: string;
  deps: readonly string[];
}

/**
 * The dependency DAG: one node per task id, an edge from each dependency to its dependent.
 * Dependencies on unknown ids and on the task itself are left out: validation reports them.
 */
export function buildDag(tasks: Iterable<GraphTask>): Graph {
  const graph = new Graph({ directed: true, multigraph: false, compound: false });
  const all: GraphTask[] = [];
  for (const task of tasks) {
    if (!graph.hasNode(task.id)) graph.setNode(task.id);
    all.push(task);
  }
  for (const task of all) {
    for (const dep of task.deps) {
      if (dep !== task.id && graph.hasNode(dep)) graph.setEdge(dep, task.id);
    }
  }
  return graph;
}
