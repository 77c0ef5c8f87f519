import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { buildDag } from '../../src/graph/dag.js';
import { stronglyConnected } from '../../src/graph/strongly-connected.js';
import { computeWaves } from '../../src/graph/waves.js';
import { cyclicArb, dagArb, reachability, type RandomGraph } from './random-graphs.js';

/**
 * The definition, applied until nothing changes: wave(t) = 1 + max(wave(deps)), 1 without
 * deps. Only for the nodes listed, whose deps must all be listed too.
 */
function referenceWaves(graph: RandomGraph, nodes: readonly number[]): Map<string, number> {
  const depsOf = new Map<number, number[]>(nodes.map((node) => [node, []]));
  for (const [from, to] of graph.edges) depsOf.get(to)?.push(from);
  const wave = new Map<number, number>(nodes.map((node) => [node, 1]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const node of nodes) {
      const next = 1 + Math.max(0, ...depsOf.get(node)!.map((dep) => wave.get(dep)!));
      if (next !== wave.get(node)) {
        wave.set(node, next);
        changed = true;
      }
    }
  }
  return new Map(nodes.map((node) => [graph.ids[node]!, wave.get(node)!]));
}

/** The number of tasks on the longest dependency chain, by walking every path. */
function longestChain(graph: RandomGraph): number {
  const next = graph.ids.map(() => new Set<number>());
  for (const [from, to] of graph.edges) next[from]!.add(to);
  let longest = 0;
  const walk = (node: number, length: number) => {
    longest = Math.max(longest, length);
    for (const successor of next[node]!) walk(successor, length + 1);
  };
  graph.ids.forEach((_, node) => walk(node, 1));
  return longest;
}

const everyNode = (graph: RandomGraph) => graph.ids.map((_, index) => index);
const wavesOf = (graph: RandomGraph) => computeWaves(buildDag(graph.tasks), graph.tasks.map((task) => task.id));

describe('computeWaves on random DAGs (differential)', () => {
  test('equals the fixed point of wave(t) = 1 + max(wave(deps))', () => {
    fc.assert(
      fc.property(dagArb(), (graph) => {
        const result = wavesOf(graph);
        expect(result.cycles).toEqual([]);
        expect(result.waves).toEqual(referenceWaves(graph, everyNode(graph)));
      }),
      { numRuns: 300 },
    );
  });

  test('every dependency sits in an earlier wave, and one of them in the wave just before', () => {
    fc.assert(
      fc.property(dagArb(), (graph) => {
        const { waves } = wavesOf(graph);
        for (const task of graph.tasks) {
          const wave = waves.get(task.id)!;
          const depWaves = task.deps.map((dep) => waves.get(dep)!);
          for (const depWave of depWaves) expect(depWave).toBeLessThan(wave);
          if (depWaves.length === 0) expect(wave).toBe(1);
          else expect(depWaves).toContain(wave - 1);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('waveCount is the length of the longest chain', () => {
    fc.assert(
      fc.property(dagArb(12), (graph) => {
        expect(wavesOf(graph).waveCount).toBe(longestChain(graph));
      }),
      { numRuns: 300 },
    );
  });

  test('the list order of the tasks does not change the waves', () => {
    fc.assert(
      fc.property(dagArb(), (graph) => {
        const reversed = { ...graph, tasks: [...graph.tasks].reverse() };
        expect(wavesOf(reversed).waves).toEqual(wavesOf(graph).waves);
      }),
    );
  });
});

describe('computeWaves on random graphs with a planted cycle', () => {
  test('reports the cycle whole and sorted, nothing downstream of it, and waves for the rest', () => {
    fc.assert(
      fc.property(cyclicArb(), (graph) => {
        const n = graph.ids.length;
        const reach = reachability(n, graph.edges);
        const anchor = graph.planted[0]!;
        const onCycle = everyNode(graph).filter((node) => reach[anchor]![node] && reach[node]![anchor]);
        const downstreamOnly = everyNode(graph).filter((node) => reach[anchor]![node] && !onCycle.includes(node));
        const clear = everyNode(graph).filter((node) => !reach[anchor]![node] && !onCycle.includes(node));

        const result = wavesOf(graph);
        const cycleIds = onCycle.map((node) => graph.ids[node]!).sort();
        expect(result.cycles).toEqual([cycleIds]);
        for (const node of graph.planted) expect(result.cycles[0]).toContain(graph.ids[node]);
        for (const node of [...onCycle, ...downstreamOnly]) expect(result.waves.has(graph.ids[node]!)).toBe(false);
        for (const node of downstreamOnly) expect(result.cycles.flat()).not.toContain(graph.ids[node]);
        expect(result.waves).toEqual(referenceWaves(graph, clear));
      }),
      { numRuns: 300 },
    );
  });
});

describe('large graphs (iterative, no recursion)', () => {
  test('a 200,000-task chain', () => {
    const n = 200_000;
    const tasks = Array.from({ length: n }, (_, index) => ({
      id: `T${index}`,
      deps: index === 0 ? [] : [`T${index - 1}`],
    })).reverse();
    const result = computeWaves(buildDag(tasks), tasks.map((task) => task.id));
    expect(result.cycles).toEqual([]);
    expect(result.waves.get(`T${n - 1}`)).toBe(n);
    expect(result.waves.get('T0')).toBe(1);
    expect(result.waveCount).toBe(n);
  });

  test('a 1,000-task cycle is reported whole, a task behind it is not', () => {
    const n = 1_000;
    const tasks = Array.from({ length: n }, (_, index) => ({
      id: `C${String(index).padStart(4, '0')}`,
      deps: [`C${String((index + n - 1) % n).padStart(4, '0')}`],
    }));
    tasks.push({ id: 'AFTER', deps: ['C0500'] }, { id: 'FREE', deps: [] });
    const result = computeWaves(buildDag(tasks), tasks.map((task) => task.id));
    expect(result.cycles).toHaveLength(1);
    expect(result.cycles[0]).toEqual(tasks.slice(0, n).map((task) => task.id));
    expect(result.waves).toEqual(new Map([['FREE', 1]]));
  });

  test('stronglyConnected finds a 200,000-node cycle as one component', () => {
    const n = 200_000;
    const nodes = Array.from({ length: n }, (_, index) => `N${index}`);
    const components = stronglyConnected(nodes, (node) => [`N${(Number(node.slice(1)) + 1) % n}`]);
    expect(components).toHaveLength(1);
    expect(components[0]).toHaveLength(n);
    expect(new Set(components[0])).toEqual(new Set(nodes));
  });
});
