import type { TaskDag } from '../graph/dag.js';
import { splitList } from '../csv/columns.js';
import type { TasksTable, TaskRow } from '../csv/tasks-file.js';
import type { Violation } from '../errors.js';
import { buildDag } from '../graph/dag.js';
import { computeWaves } from '../graph/waves.js';
import { pipelineRoles } from '../pipelines/roles.js';
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
 * the file line where its row starts, sorted by line.
 */
export function validateTasks(table: TasksTable, pipeline: PipelineName): ValidationReport {
  const violations: Violation[] = [];
  const roles = pipelineRoles(pipeline);
  const firstById = new Map<string, TaskRow>();

  for (const row of table.rows) {
    const parsed = taskRowSchema.safeParse(row);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) violations.push({ line: row.line, message: issue.message });
    }
    if (row.role !== '' && roles !== null && !roles.has(row.role)) {
      violations.push({ line: row.line, message: `Invalid role: ${row.role}` });
    }
    if (firstById.has(row.id)) violations.push({ line: row.line, message: `Duplicate task ID: ${row.id}` });
    else firstById.set(row.id, row);
  }

  const tasks = [...firstById.values()].map((row) => ({ row, deps: splitList(row.deps) }));
  for (const { row, deps } of tasks) {
    let unresolved = false;
    for (const dep of deps) {
      if (dep === row.id) violations.push({ line: row.line, message: `Self-dependency: ${row.id}` });
      else if (!firstById.has(dep)) {
        violations.push({ line: row.line, message: `Unknown dependency: ${dep}` });
        unresolved = true;
      }
    }
    if (unresolved && row.exec_mode === 'interactive') {
      violations.push({ line: row.line, message: `Cross-mechanism dependency unresolvable: ${row.id}` });
    }
  }

  const graph = buildDag(tasks.map(({ row, deps }) => ({ id: row.id, deps })));
  const { waves, waveCount, cycles } = computeWaves(graph, [...firstById.keys()]);
  for (const cycle of cycles) {
    const line = Math.min(...cycle.map((id) => firstById.get(id)!.line));
    violations.push({ line, message: `Circular dependency detected involving: ${cycle.join(';')}` });
  }

  for (const { row } of tasks) {
    const wave = waves.get(row.id);
    for (const source of splitList(row.context_from)) {
      const sourceWave = waves.get(source);
      const known = firstById.has(source);
      const tooLate = wave !== undefined && sourceWave !== undefined && sourceWave >= wave;
      if (!known || source === row.id || tooLate) {
        violations.push({ line: row.line, message: `Invalid context_from: ${source}` });
      }
    }
  }

  violations.sort((a, b) => a.line - b.line);
  return { violations, plan: { graph, waves, waveCount } };
}
