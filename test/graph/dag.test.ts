import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { buildDag, type GraphTask } from '../../src/graph/dag.js';

/** The graph as buildDag is specified: one edge per distinct known dependency of each listed task, self-dependencies left out. */
function reference(tasks: GraphTask[]): { nodes: string[]; edges: [string, string][] } {
  const nodes = [...new Set(tasks.map((task) => task.id))];
  const successors = new Map(nodes.map((id) => [id, [] as string[]]));
  for (const task of tasks) {
    for (const dep of new Set(task.deps)) if (dep !== task.id && successors.has(dep)) successors.get(dep)!.push(task.id);
  }
  return { nodes, edges: nodes.flatMap((from) => successors.get(from)!.map((to): [string, string] => [from, to])) };
}

describe('buildDag', () => {
  test('one edge per distinct known dependency of each task, even with repeated deps, self-deps, unknown ids and a repeated task id (property)', () => {
    const id = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    const task = fc.record({ id, deps: fc.array(fc.oneof(id, fc.constant('zz')), { maxLength: 6 }) });
    fc.assert(
      fc.property(fc.array(task, { maxLength: 8 }), (tasks) => {
        const graph = buildDag(tasks);
        const expected = reference(tasks);
        expect(graph.nodes()).toEqual(expected.nodes);
        expect(graph.edges()).toEqual(expected.edges);
        for (const node of expected.nodes) {
          const inDegree = expected.edges.filter(([, to]) => to === node).length;
          expect(graph.inDegreeAt(graph.indexOf(node)!)).toBe(inDegree);
        }
      }),
    );
  });
});
