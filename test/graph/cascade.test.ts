import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { downstream } from '../../src/graph/cascade.js';
import { buildDag, type GraphTask } from '../../src/graph/dag.js';
import { cyclicArb, dagArb, reachability, type RandomGraph } from './random-graphs.js';

/** Tasks from `id: deps` pairs. */
const graphOf = (spec: Record<string, string[]>) =>
  buildDag(Object.entries(spec).map(([id, deps]): GraphTask => ({ id, deps })));

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('downstream', () => {
  test('is transitive', () => {
    const graph = graphOf({ a: [], b: ['a'], c: ['b'], d: ['c'], other: [] });
    expect(sorted(downstream(graph, ['a']))).toEqual(['b', 'c', 'd']);
    expect(sorted(downstream(graph, ['c']))).toEqual(['d']);
    expect(sorted(downstream(graph, ['d']))).toEqual([]);
  });

  test('handles a diamond, each task once', () => {
    const graph = graphOf({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'], e: ['d'] });
    expect(sorted(downstream(graph, ['a']))).toEqual(['b', 'c', 'd', 'e']);
    expect(sorted(downstream(graph, ['b']))).toEqual(['d', 'e']);
  });

  test('excludes the start ids, even one downstream of another', () => {
    const graph = graphOf({ a: [], b: ['a'], c: ['b'], x: [], y: ['x'] });
    expect(sorted(downstream(graph, ['a', 'b']))).toEqual(['c']);
    expect(sorted(downstream(graph, ['a', 'x']))).toEqual(['b', 'c', 'y']);
  });

  test('does not loop on a cycle and still excludes the start', () => {
    const graph = graphOf({ a: ['c'], b: ['a'], c: ['b'], d: ['c'] });
    expect(sorted(downstream(graph, ['a']))).toEqual(['b', 'c', 'd']);
  });

  test('no start ids, or unknown ones, reach nothing', () => {
    const graph = graphOf({ a: [], b: ['a'] });
    expect(downstream(graph, []).size).toBe(0);
    expect(downstream(graph, ['nope']).size).toBe(0);
  });

  const reference = (graph: RandomGraph, start: readonly number[]) => {
    const reach = reachability(graph.ids.length, graph.edges);
    const ids = graph.ids.filter((_, node) => !start.includes(node) && start.some((from) => reach[from]![node]));
    return ids.sort();
  };
  const withStart = (arb: fc.Arbitrary<RandomGraph>) =>
    arb.chain((graph) =>
      fc.tuple(fc.constant(graph), fc.uniqueArray(fc.nat(graph.ids.length - 1), { maxLength: graph.ids.length })),
    );

  test('equals brute-force reachability on random DAGs (property)', () => {
    fc.assert(
      fc.property(withStart(dagArb()), ([graph, start]) => {
        const found = downstream(buildDag(graph.tasks), start.map((node) => graph.ids[node]!));
        expect(sorted(found)).toEqual(reference(graph, start));
      }),
      { numRuns: 300 },
    );
  });

  test('equals brute-force reachability on random graphs with a cycle (property)', () => {
    fc.assert(
      fc.property(withStart(cyclicArb()), ([graph, start]) => {
        const found = downstream(buildDag(graph.tasks), start.map((node) => graph.ids[node]!));
        expect(sorted(found)).toEqual(reference(graph, start));
      }),
      { numRuns: 300 },
    );
  });
});
