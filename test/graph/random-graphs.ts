import fc from 'fast-check';
import type { GraphTask } from '../../src/graph/dag.js';

/** A random task graph: tasks in a shuffled order, each id naming a node by index. */
export interface RandomGraph {
  tasks: GraphTask[];
  /** Node index → task id; ids are shuffled so that neither id nor list order is topological. */
  ids: string[];
  /** Edges as [dependency index, dependent index]. */
  edges: [number, number][];
}

function toGraph(edges: [number, number][], idOrder: number[], listOrder: number[]): RandomGraph {
  const ids = idOrder.map((k) => `t${k}`);
  const deps: string[][] = ids.map(() => []);
  for (const [from, to] of edges) deps[to]!.push(ids[from]!);
  const tasks = listOrder.map((index) => ({ id: ids[index]!, deps: deps[index]! }));
  return { tasks, ids, edges };
}

const permutation = (n: number) =>
  fc.shuffledSubarray(
    Array.from({ length: n }, (_, index) => index),
    { minLength: n, maxLength: n },
  );

/** A random DAG of up to maxNodes nodes: edges only from a lower to a higher index. */
export function dagArb(maxNodes = 25): fc.Arbitrary<RandomGraph> {
  return fc.integer({ min: 1, max: maxNodes }).chain((n) =>
    fc
      .tuple(
        fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 3 }),
        permutation(n),
        permutation(n),
      )
      .map(([pairs, idOrder, listOrder]) => {
        const edges = pairs
          .filter(([a, b]) => a !== b)
          .map(([a, b]): [number, number] => (a < b ? [a, b] : [b, a]));
        return toGraph(edges, idOrder, listOrder);
      }),
  );
}

/**
 * A random DAG with one planted cycle: forward edges along chosen nodes c0 < c1 < … < ck
 * and the one backward edge ck → c0. Every cycle has to use that edge, so there is
 * exactly one strongly connected component of more than one node.
 */
export function cyclicArb(maxNodes = 25): fc.Arbitrary<RandomGraph & { planted: number[] }> {
  return dagArb(maxNodes)
    .filter((graph) => graph.ids.length >= 2)
    .chain((graph) =>
      fc
        .uniqueArray(fc.nat(graph.ids.length - 1), { minLength: 2, maxLength: Math.min(6, graph.ids.length) })
        .map((chosen) => {
          const planted = [...chosen].sort((a, b) => a - b);
          const edges: [number, number][] = [...graph.edges];
          for (let k = 0; k + 1 < planted.length; k++) edges.push([planted[k]!, planted[k + 1]!]);
          edges.push([planted.at(-1)!, planted[0]!]);
          const deps = new Map(graph.ids.map((id) => [id, [] as string[]]));
          for (const [from, to] of edges) deps.get(graph.ids[to]!)!.push(graph.ids[from]!);
          const tasks = graph.tasks.map((task) => ({ id: task.id, deps: deps.get(task.id)! }));
          return { tasks, ids: graph.ids, edges, planted };
        }),
    );
}

/** reach[a][b]: b can be reached from a along one or more edges (Floyd–Warshall closure). */
export function reachability(n: number, edges: readonly [number, number][]): boolean[][] {
  const reach = Array.from({ length: n }, () => Array<boolean>(n).fill(false));
  for (const [from, to] of edges) reach[from]![to] = true;
  for (let k = 0; k < n; k++) {
    for (let a = 0; a < n; a++) {
      if (!reach[a]![k]) continue;
      for (let b = 0; b < n; b++) if (reach[k]![b]) reach[a]![b] = true;
    }
  }
  return reach;
}
