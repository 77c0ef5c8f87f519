import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, copySample } from '../helpers/session-builder.js';
import { kAllStatusesCsv, kAllStatusesEdges, kAllStatusesTasks } from './sessions.js';

const kStatuses = ['pending', 'in_progress', 'completed', 'failed', 'skipped'];

/** What a rendered graph says: nodes with their wave group and colour, and edges. */
interface ReadGraph {
  /** Id → the wave its node is drawn in. */
  waveOf: Map<string, number>;
  /** Id → its fill colour. */
  colourOf: Map<string, string>;
  edges: string[];
}

function readMermaid(text: string): ReadGraph {
  const idOfNode = new Map<string, string>();
  const waveOf = new Map<string, number>();
  const classOf = new Map<string, string>();
  const fillOfClass = new Map<string, string>();
  const edges: string[] = [];
  let wave: number | undefined;
  for (const line of text.split('\n').map((l) => l.trim())) {
    let match: RegExpExecArray | null;
    if ((match = /^subgraph wave(\d+)\["Wave \1"\]$/.exec(line))) wave = Number(match[1]);
    else if (line === 'end') wave = undefined;
    else if ((match = /^(\w+)(?:\[|\{\{)"([^<"]+)<br\/>/.exec(line))) {
      idOfNode.set(match[1]!, match[2]!);
      if (wave !== undefined) waveOf.set(match[2]!, wave);
    } else if ((match = /^(\w+) --> (\w+)$/.exec(line))) edges.push(`${match[1]}->${match[2]}`);
    else if ((match = /^classDef (\w+) fill:(#[0-9a-f]{6})/.exec(line))) fillOfClass.set(match[1]!, match[2]!);
    else if ((match = /^class (\w+) (\w+)$/.exec(line))) classOf.set(match[1]!, match[2]!);
  }
  const colourOf = new Map([...classOf].map(([node, name]) => [idOfNode.get(node)!, fillOfClass.get(name)!]));
  const named = edges.map((edge) => edge.split('->').map((node) => idOfNode.get(node)).join('->'));
  return { waveOf, colourOf, edges: named };
}

function readDot(text: string): ReadGraph {
  const waveOf = new Map<string, number>();
  const colourOf = new Map<string, string>();
  const edges: string[] = [];
  let wave: number | undefined;
  let ranked = false;
  for (const line of text.split('\n').map((l) => l.trim())) {
    let match: RegExpExecArray | null;
    if ((match = /^subgraph wave_(\d+) \{$/.exec(line))) {
      wave = Number(match[1]);
      ranked = false;
    } else if (line === 'rank=same;') ranked = true;
    else if (line === '}') wave = undefined;
    else if ((match = /^"([^"]+)" -> "([^"]+)";$/.exec(line))) edges.push(`${match[1]}->${match[2]}`);
    else if ((match = /^"([^"]+)" \[.*fillcolor="(#[0-9a-f]{6})"/.exec(line))) {
      colourOf.set(match[1]!, match[2]!);
      if (wave !== undefined && ranked) waveOf.set(match[1]!, wave);
    }
  }
  return { waveOf, colourOf, edges };
}

/** Checks a read graph against kAllStatusesCsv: every id in its wave, every edge, one colour per status. */
function expectAllStatusesGraph(graph: ReadGraph): void {
  expect(Object.fromEntries(graph.waveOf)).toEqual(Object.fromEntries(kAllStatusesTasks.map((t) => [t.id, t.wave])));
  expect([...graph.edges].sort()).toEqual([...kAllStatusesEdges].sort());
  const colourOfStatus = new Map<string, string>();
  for (const task of kAllStatusesTasks) {
    const colour = graph.colourOf.get(task.id);
    expect(colour, task.id).toBeDefined();
    const seen = colourOfStatus.get(task.status);
    if (seen === undefined) colourOfStatus.set(task.status, colour!);
    else expect(colour, `${task.id} has the colour of the other ${task.status} tasks`).toBe(seen);
  }
  expect(colourOfStatus.size).toBe(kStatuses.length);
  expect(new Set(colourOfStatus.values()).size).toBe(kStatuses.length);
}

describe('csv-wave graph', () => {
  test('mermaid (the default): a subgraph per wave, every edge, a colour per status', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const result = await runCli('graph', dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith('flowchart')).toBe(true);
    expect((await runCli('graph', dir, '--format', 'mermaid')).stdout).toBe(result.stdout);
    expectAllStatusesGraph(readMermaid(result.stdout));
  });

  test('dot: a rank=same subgraph per wave, every edge, a colour per status', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const result = await runCli('graph', dir, '--format', 'dot');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith('digraph')).toBe(true);
    expectAllStatusesGraph(readDot(result.stdout));
  });

  test('--json wraps the rendered text', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const text = await runCli('graph', dir, '--format', 'dot');
    const json = await runCli('graph', dir, '--format', 'dot', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ format: 'dot', graph: text.stdout });
  });

  test('--format svg is a usage error (exit code 2)', async () => {
    const result = await runCli('graph', buildSession(kAllStatusesCsv, { session: null }), '--format', 'svg');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('svg');
  });

  test('exit code 2 for a file with a cycle: the graph is only drawn for valid files', async () => {
    const dir = buildSession('id,description,role,deps\nA,do,ideator,B\nB,do,ideator,A\n', { session: null });
    const result = await runCli('graph', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(':2: Circular dependency detected involving: A;B');
  });
});

describe('csv-wave graph --format json', () => {
  test('prints graphlib JSON with every task and edge', async () => {
    const result = await runCli('graph', copySample('brainstorm'), '--format', 'json');
    expect(result.code).toBe(0);
    const graph = JSON.parse(result.stdout) as { nodes: { v: string; value: { wave: number } }[]; edges: { v: string; w: string }[] };
    expect(graph.nodes.map((node) => node.v)).toContain('GC-CHECK-001');
    expect(graph.nodes.find((node) => node.v === 'EVAL-001')!.value.wave).toBe(6);
    expect(graph.edges).toContainEqual({ v: 'SYNTH-001', w: 'EVAL-001' });
    expect(graph.edges).toHaveLength(6);
  });
});
