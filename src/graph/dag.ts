/** The minimum the graph needs of a task. */
export interface GraphTask {
  id: string;
  deps: readonly string[];
}

/**
 * The dependency DAG: one node per task id, an edge from each dependency to its dependent.
 * Nodes are numbered in insertion order and edges kept in integer arrays: at 100,000 tasks
 * graphlib's string-keyed edge objects took most of `plan`'s time and memory (see
 * BENCHMARKS.md), so graphlib is used only to export the graph (`csv-wave graph --format json`).
 */
export class TaskDag {
  readonly #ids: string[] = [];
  readonly #index = new Map<string, number>();
  readonly #successors: number[][] = [];
  readonly #inDegree: number[] = [];

  /** Adds a node (once). Returns its index. */
  addNode(id: string): number {
    let index = this.#index.get(id);
    if (index === undefined) {
      index = this.#ids.length;
      this.#ids.push(id);
      this.#index.set(id, index);
      this.#successors.push([]);
      this.#inDegree.push(0);
    }
    return index;
  }

  /** Adds the edge dependency → dependent. The caller adds each edge once. */
  addEdge(from: string, to: string): void {
    const a = this.addNode(from);
    const b = this.addNode(to);
    this.#successors[a]!.push(b);
    this.#inDegree[b]!++;
  }

  hasNode(id: string): boolean {
    return this.#index.has(id);
  }

  /** Node ids in insertion order. */
  nodes(): string[] {
    return [...this.#ids];
  }

  get size(): number {
    return this.#ids.length;
  }

  indexOf(id: string): number | undefined {
    return this.#index.get(id);
  }

  idAt(index: number): string {
    return this.#ids[index]!;
  }

  /** Dependents of a node by index (read only). */
  successorIndexes(index: number): readonly number[] {
    return this.#successors[index]!;
  }

  inDegreeAt(index: number): number {
    return this.#inDegree[index]!;
  }

  /** Direct dependents of a task, or undefined when the id is not in the graph. */
  successors(id: string): string[] | undefined {
    const index = this.#index.get(id);
    return index === undefined ? undefined : this.#successors[index]!.map((next) => this.#ids[next]!);
  }

  /** Every edge as [dependency, dependent]. */
  edges(): [string, string][] {
    return this.#successors.flatMap((next, from) => next.map((to): [string, string] => [this.#ids[from]!, this.#ids[to]!]));
  }
}

/**
 * Builds the DAG of the tasks. Dependencies on unknown ids and on the task itself are
 * left out: validation reports them.
 */
export function buildDag(tasks: Iterable<GraphTask>): TaskDag {
  const graph = new TaskDag();
  const all: GraphTask[] = [];
  for (const task of tasks) {
    graph.addNode(task.id);
    all.push(task);
  }
  for (const task of all) {
    for (const dep of new Set(task.deps)) {
      if (dep !== task.id && graph.hasNode(dep)) graph.addEdge(dep, task.id);
    }
  }
  return graph;
}
