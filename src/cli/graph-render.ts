import { Graph, json } from '@dagrejs/graphlib';
import { splitList } from '../core/id-list.js';
import type { TasksTable } from '../csv/tasks-table.js';
import type { TaskStatus } from '../schema/row.js';
import { statusOf } from '../core/skip-cause.js';

/** Fill colours by status, shared by both formats so that the pictures agree. */
const kStatusColour: Record<TaskStatus, string> = {
  pending: '#eeeeee',
  in_progress: '#fff3b0',
  completed: '#b7e4c7',
  failed: '#f4a6a6',
  skipped: '#d0d0d0',
};

/** Mermaid flowchart: one subgraph per wave (the rank), one class per status (the colour). */
export function renderMermaid(table: TasksTable, waves: Map<string, number>): string {
  const nodeName = new Map(table.rows.map((row, index) => [row.id, `t${index}`]));
  const lines = ['flowchart LR'];
  for (const [wave, rows] of groupByWave(table, waves)) {
    lines.push(`  subgraph wave${wave}["Wave ${wave}"]`, '    direction TB');
    for (const row of rows) {
      const shape = row.exec_mode === 'interactive' ? ['{{', '}}'] : ['[', ']'];
      const label = `${row.id}<br/>${row.role}`.replace(/"/g, '#quot;');
      lines.push(`    ${nodeName.get(row.id)}${shape[0]}"${label}"${shape[1]}`);
    }
    lines.push('  end');
  }
  for (const row of table.rows) {
    for (const dep of splitList(row.deps)) {
      if (nodeName.has(dep)) lines.push(`  ${nodeName.get(dep)} --> ${nodeName.get(row.id)}`);
    }
  }
  for (const [status, colour] of Object.entries(kStatusColour)) lines.push(`  classDef ${status} fill:${colour},stroke:#555`);
  for (const row of table.rows) lines.push(`  class ${nodeName.get(row.id)} ${statusOf(row)}`);
  return `${lines.join('\n')}\n`;
}

/** Graphviz dot: one `rank=same` subgraph per wave, fill colour by status. */
export function renderDot(table: TasksTable, waves: Map<string, number>): string {
  const quote = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
  const lines = ['digraph tasks {', '  rankdir=LR;', '  node [shape=box, style=filled, fontname="Helvetica"];'];
  for (const [wave, rows] of groupByWave(table, waves)) {
    lines.push(`  subgraph wave_${wave} {`, '    rank=same;');
    for (const row of rows) {
      const shape = row.exec_mode === 'interactive' ? ', shape=hexagon' : '';
      const label = quote(`${row.id}\n${row.role}\nwave ${wave}`);
      lines.push(`    ${quote(row.id)} [label=${label}, fillcolor=${quote(kStatusColour[statusOf(row)])}${shape}];`);
    }
    lines.push('  }');
  }
  const ids = new Set(table.rows.map((row) => row.id));
  for (const row of table.rows) {
    for (const dep of splitList(row.deps)) if (ids.has(dep)) lines.push(`  ${quote(dep)} -> ${quote(row.id)};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

function groupByWave(table: TasksTable, waves: Map<string, number>): Map<number, TasksTable['rows']> {
  const groups = new Map<number, TasksTable['rows']>();
  for (const row of table.rows) {
    const wave = waves.get(row.id) ?? 0;
    const group = groups.get(wave);
    if (group) group.push(row);
    else groups.set(wave, [row]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => a - b));
}

/**
 * The graph as graphlib JSON (`json.write`), the format dagre and dagre-d3 read: nodes
 * labelled with role, wave, status and exec_mode.
 */
export function renderGraphlibJson(table: TasksTable, waves: Map<string, number>): string {
  const graph = new Graph({ directed: true });
  for (const row of table.rows) {
    graph.setNode(row.id, { role: row.role, wave: waves.get(row.id) ?? null, status: statusOf(row), exec_mode: row.exec_mode || 'csv-wave' });
  }
  for (const row of table.rows) {
    for (const dep of splitList(row.deps)) if (graph.hasNode(dep)) graph.setEdge(dep, row.id);
  }
  return `${JSON.stringify(json.write(graph), null, 2)}\n`;
}
