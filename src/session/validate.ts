import type { TaskDag } from '../graph/dag.js';
import { formatCount, isKnownColumn, kOutputColumns, kSpreadsheetCellLimit, showCell } from '../csv/columns.js';
import { splitList } from '../core/id-list.js';
import { cellReader, type TasksTable } from '../csv/tasks-table.js';
import type { TaskRow } from '../core/task.js';
import type { Violation } from '../errors.js';
import { buildDag } from '../graph/dag.js';
import { computeWaves } from '../graph/waves.js';
import { pipelineRoles, roleHint } from '../pipelines/roles.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import { taskRowSchema } from '../schema/row.js';
import type { PipelineName } from '../schema/session.js';

export interface TaskPlan {
  graph: TaskDag;
  /** Wave of every task (DESIGN.md section 4). */
  waves: Map<string, number>;
  waveCount: number;
}

export interface ValidationReport {
  violations: Violation[];
  /** Present when the graph could be built (no cycle); waves may still be partial otherwise. */
  plan: TaskPlan;
}

/**
 * Checks every rule of DESIGN.md section 3 and reports every violation at once, each at
 * the file line where its row starts, sorted by line. Values in messages go through
 * showCell: odd characters escaped, long values cut.
 */
export function validateTasks(table: TasksTable, pipeline: PipelineName): ValidationReport {
  const violations: Violation[] = [];
  const roles = pipelineRoles(pipeline);
  const { required } = pipelineFor(pipeline).columns;
  const needsDescription = required.includes('description');
  const needsRole = required.includes('role');
  const firstById = new Map<string, TaskRow>();
  const outputColumns = new Set<string>(kOutputColumns);
  const inputColumns = table.columns.filter((column) => !outputColumns.has(column)).map((name) => ({ name, cell: cellReader(name) }));

  for (const row of table.rows) {
    const parsed = taskRowSchema.safeParse(row);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) violations.push({ line: row.line, message: issueMessage(issue, row) });
    }
    if (needsDescription && row.description.trim() === '') violations.push({ line: row.line, message: `Empty description for task: ${showCell(row.id)}` });
    if (needsRole && row.role === '') violations.push({ line: row.line, message: 'Invalid role: ' });
    else if (row.role !== '' && roles !== null && !roles.has(row.role)) {
      violations.push({ line: row.line, message: `Invalid role: ${showCell(row.role)} (${roleHint(pipeline)})` });
    }
    if (firstById.has(row.id)) violations.push({ line: row.line, message: `Duplicate task ID: ${showCell(row.id)}` });
    else firstById.set(row.id, row);
    // A spreadsheet cuts a longer cell without a word, and the next save loses the rest.
    // Output cells are the engine's, and capped where it writes them.
    for (const column of inputColumns) {
      const length = column.cell(row).length;
      if (length > kSpreadsheetCellLimit) {
        violations.push({
          line: row.line,
          message: `Cell too long in column ${showCell(column.name)}: ${formatCount(length)} characters, more than the ${formatCount(kSpreadsheetCellLimit)} a spreadsheet cell holds: move the text into a file and refer to it`,
        });
      }
    }
  }

  const tasks = [...firstById.values()].map((row) => ({ row, deps: splitList(row.deps) }));
  for (const { row, deps } of tasks) {
    let unresolved = false;
    for (const dep of deps) {
      if (dep === row.id) violations.push({ line: row.line, message: `Self-dependency: ${showCell(row.id)}` });
      else if (!firstById.has(dep)) {
        violations.push({ line: row.line, message: `Unknown dependency: ${showCell(dep)}` });
        unresolved = true;
      }
    }
    if (unresolved && row.exec_mode === 'interactive') {
      violations.push({ line: row.line, message: `Cross-mechanism dependency unresolvable: ${showCell(row.id)}` });
    }
  }

  const graph = buildDag(tasks.map(({ row, deps }) => ({ id: row.id, deps })));
  // The graph's nodes are in firstById's order: the waves need no other order.
  const { waves, waveCount, cycles } = computeWaves(graph);
  for (const cycle of cycles) {
    let line = Infinity;
    for (const id of cycle) line = Math.min(line, firstById.get(id)!.line);
    violations.push({ line, message: `Circular dependency detected involving: ${cycle.map(showCell).join(';')}` });
  }

  for (const { row } of tasks) {
    const wave = waves.get(row.id);
    for (const source of splitList(row.context_from)) {
      const sourceWave = waves.get(source);
      const known = firstById.has(source);
      const tooLate = wave !== undefined && sourceWave !== undefined && sourceWave >= wave;
      if (!known || source === row.id || tooLate) {
        violations.push({ line: row.line, message: `Invalid context_from: ${showCell(source)}` });
      }
    }
  }

  violations.sort((a, b) => a.line - b.line);
  return { violations, plan: { graph, waves, waveCount } };
}

/**
 * The schema's message (DESIGN.md section 3) with the offending cell shown by showCell.
 * The messages are `<rule>: <cell>…`; the empty-description one names the task instead.
 */
function issueMessage(issue: { message: string; path: PropertyKey[] }, row: TaskRow): string {
  const column = issue.path[0];
  if (column === 'description') return `Empty description for task: ${showCell(row.id)}`;
  const cell = typeof column === 'string' && isKnownColumn(column) ? row[column] : '';
  const at = cell === '' ? -1 : issue.message.indexOf(`: ${cell}`);
  if (at === -1) return issue.message;
  return `${issue.message.slice(0, at + 2)}${showCell(cell)}${issue.message.slice(at + 2 + cell.length)}`;
}
