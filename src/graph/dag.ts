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
    this.#addEdgeAt(this.addNode(from), this.addNode(to));
  }

  #addEdgeAt(from: number, to: number): void {
    this.#successors[from]!.push(to);
    this.#inDegree[to]!++;
  }

  /**
   * Builds the DAG of the tasks. Dependencies on unknown ids and on the task itself are
   * left out: validation reports them. Each dependency costs one id lookup, and a task's
   * repeated dependency is told by a mark per node rather than a Set per task.
   */
  static of(tasks: Iterable<GraphTask>): TaskDag {
    const graph = new TaskDag();
    const all: GraphTask[] = [];
    const at: number[] = [];
    for (const task of tasks) {
      at.push(graph.addNode(task.id));
      all.push(task);
    }
    // marked[node] === k + 1: task k already has node as a dependency.
    const marked = new Int32Array(graph.size);
    for (let k = 0; k < all.length; k++) {
      const to = at[k]!;
      for (const dep of all[k]!.deps) {
        const from = graph.#index.get(dep);
        if (from === undefined || from === to || marked[from] === k + 1) continue;
        marked[from] = k + 1;
        graph.#addEdgeAt(from, to);
      }
    }
    return graph;
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
  return TaskDag.of(tasks);
}
