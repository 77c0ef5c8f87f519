import type { TaskDag } from './dag.js';
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
 * given node order (by default the graph's own, which costs no id lookup), so that equal
 * inputs give equal outputs.
 */
export function computeWaves(graph: TaskDag, order?: readonly string[]): WaveAssignment {
  const size = graph.size;
  const indexes = order === undefined ? Array.from({ length: size }, (_, index) => index) : order.map((id) => graph.indexOf(id)!);
  const wave = new Int32Array(size);
  const remaining = new Int32Array(size);
  const ready: number[] = [];
  for (const index of indexes) {
    remaining[index] = graph.inDegreeAt(index);
    if (remaining[index] === 0) {
      ready.push(index);
      wave[index] = 1;
    }
  }
  let waveCount = 0;
  for (let head = 0; head < ready.length; head++) {
    const index = ready[head]!;
    const current = wave[index]!;
    if (current > waveCount) waveCount = current;
    for (const next of graph.successorIndexes(index)) {
      if (wave[next]! < current + 1) wave[next] = current + 1;
      if (--remaining[next]! === 0) ready.push(next);
    }
  }

  const waves = new Map<string, number>();
  const cycles: string[][] = [];
  const stuck: string[] = [];
  for (const index of indexes) {
    const id = graph.idAt(index);
    if (remaining[index] === 0) waves.set(id, wave[index]!);
    else stuck.push(id);
  }
  if (stuck.length > 0) {
    // Nodes Kahn could not reach sit on a cycle or behind one; Tarjan tells them apart.
    const stuckSet = new Set(stuck);
    const components = stronglyConnected(stuck, (node) =>
      (graph.successors(node) ?? []).filter((successor) => stuckSet.has(successor)),
    );
    for (const component of components) if (component.length > 1) cycles.push(component.sort());
  }
  return { waves, waveCount, cycles };
}
