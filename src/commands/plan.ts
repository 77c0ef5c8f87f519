import { writeTasksFile } from '../csv/serialize-tasks.js';
import { fillWaveColumn } from '../core/wave-column.js';
import type { LoadedSession } from '../session/load.js';

export interface WaveSummary {
  wave: number;
  ids: string[];
  /** Ids of the wave's interactive tasks (they run in the interactive lane, not in wave files). */
  interactive: string[];
}

export interface PlanSummary {
  tasks: number;
  waveCount: number;
  /** Tasks on the longest dependency chain (equal to the number of waves). */
  longestChain: number;
  waves: WaveSummary[];
}

/** Groups tasks by wave, in file order within a wave. */
export function summarizePlan(loaded: LoadedSession): PlanSummary {
  const waves: WaveSummary[] = [];
  for (let wave = 1; wave <= loaded.plan.waveCount; wave++) waves.push({ wave, ids: [], interactive: [] });
  for (const row of loaded.table.rows) {
    const summary = waves[loaded.plan.waves.get(row.id)! - 1]!;
    summary.ids.push(row.id);
    if (row.exec_mode === 'interactive') summary.interactive.push(row.id);
  }
  return { tasks: loaded.table.rows.length, waveCount: loaded.plan.waveCount, longestChain: loaded.plan.waveCount, waves };
}

/** Fills the wave column from the plan; rewrites tasks.csv only when a cell changed. Returns whether it did. */
export function writeWaveColumn(loaded: LoadedSession): boolean {
  const changed = fillWaveColumn(loaded.table.rows, loaded.plan.waves);
  if (changed) writeTasksFile(loaded.session.tasksPath, loaded.table);
  return changed;
}
