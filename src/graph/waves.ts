import type { Graph } from '@dagrejs/graphlib';
import { stronglyConnected } from './strongly-connected.js';

export interface WaveAssignment {
  /** wave(t) = 1 without deps, else 1 + the largest wave of its deps. Tasks on or behind a cycle have none. */
  waves: Map<string, number>;
  /** The highest wave: the number of tasks on the longest dependency chain. */
  waveCount: number;
  /** Each cycle's task ids (one strongly connected component each), sorted. */
  cycles: string[][];
}

/**
 * Assigns waves with Kahn's algorithm (iterative: a 200,000-task chain is fine) in the
 * given node order, so that equal inputs give equal outputs.
 */
export function computeWaves(graph: Graph, order: readonly string[] = graph.nodes()): WaveAssignment {
  const waves = new Map<string, number>();
  const remainingDeps = new Map<string, number>();
  const ready: string[] = [];
  for (const node of order) {
    const count = graph.inEdges(node)?.length ?? 0;
    remainingDeps.set(node, count);
    if (count === 0) {
      ready.push(node);
      waves.set(node, 1);
    }
  }
  let waveCount = 0;
  for (let head = 0; head < ready.length; head++) {
    const node = ready[head]!;
    const wave = waves.get(node)!;
    if (wave > waveCount) waveCount = wave;
    for (const successor of graph.successors(node) ?? []) {
      if ((waves.get(successor) ?? 0) < wave + 1) waves.set(successor, wave + 1);
      const left = remainingDeps.get(successor)! - 1;
      remainingDeps.set(successor, left);
      if (left === 0) ready.push(successor);
    }
  }

  const cycles: string[][] = [];
  if (ready.length < order.length) {
    // Nodes Kahn could not reach sit on a cycle or behind one; Tarjan tells them apart.
    const stuck = order.filter((node) => remainingDeps.get(node)! > 0);
    for (const node of stuck) waves.delete(node);
    const stuckSet = new Set(stuck);
    const components = stronglyConnected(stuck, (node) =>
      (graph.successors(node) ?? []).filter((successor) => stuckSet.has(successor)),
    );
    for (const component of components) if (component.length > 1) cycles.push(component.sort());
  }
  return { waves, waveCount, cycles };
}
