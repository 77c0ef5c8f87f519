import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { kTaskColumns, type TaskRow } from '../../src/core/task.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';
import { validateTasks } from '../../src/session/validate.js';
import { analyzeTasks } from '../../src/pipelines/analyze/decompose.js';
import { brainstormTasks, kDefaultAngles } from '../../src/pipelines/brainstorm/decompose.js';

const table = (rows: TaskRow[]) => ({ columns: [...kTaskColumns], rows, format: { bom: false, eol: '\n' as const } });

function planned(rows: TaskRow[], pipeline: 'brainstorm' | 'analyze') {
  const report = validateTasks(table(rows), pipeline);
  expect(report.violations).toEqual([]);
  for (const row of rows) row.wave = String(report.plan.waves.get(row.id));
  return report.plan;
}

describe('brainstorm decomposer', () => {
  test('full mode with the default angles reproduces the seed example byte for byte', () => {
    const rows = brainstormTasks({ angles: kDefaultAngles, mode: 'full' });
    planned(rows, 'brainstorm');
    const seed = readFileSync(new URL('../../samples/brainstorm/tasks.csv', import.meta.url), 'utf8');
    expect(serializeTasks(table(rows))).toBe(seed);
  });

  test('quick mode is IDEA → CHALLENGE → SYNTH', () => {
    const rows = brainstormTasks({ angles: ['A', 'B'], mode: 'quick' });
    expect(rows.map((row) => [row.id, row.deps])).toEqual([
      ['IDEA-001', ''],
      ['CHALLENGE-001', 'IDEA-001'],
      ['SYNTH-001', 'CHALLENGE-001'],
    ]);
    expect(rows[0]!.angle).toBe('A;B');
    expect(planned(rows, 'brainstorm').waveCount).toBe(3);
  });

  test('deep mode adds the GC check, one revision and the evaluator', () => {
    const rows = brainstormTasks({ angles: ['A'], mode: 'deep' });
    expect(rows.map((row) => row.id)).toEqual(['IDEA-001', 'CHALLENGE-001', 'GC-CHECK-001', 'IDEA-002', 'SYNTH-001', 'EVAL-001']);
    expect(rows.find((row) => row.id === 'GC-CHECK-001')!.exec_mode).toBe('interactive');
    expect(planned(rows, 'brainstorm').waveCount).toBe(6);
  });

  test('full mode gives the first three angles to one ideator and one each to the rest', () => {
    const rows = brainstormTasks({ angles: ['A', 'B', 'C', 'D', 'E'], mode: 'full' });
    expect(rows.filter((row) => row.role === 'ideator' && row.gc_round === '0').map((row) => row.angle)).toEqual(['A;B;C', 'D', 'E']);
    expect(rows.find((row) => row.id === 'CHALLENGE-001')!.deps).toBe('IDEA-001;IDEA-002;IDEA-003');
    expect(rows.find((row) => row.id === 'IDEA-004')!.deps).toBe('GC-CHECK-001');
  });
});

describe('analyze decomposer', () => {
  test('standard mode: explore and analyze per perspective, one discussion, then synthesis', () => {
    const rows = analyzeTasks({ topic: 'T', perspectives: ['a', 'b'], mode: 'standard' });
    expect(rows.map((row) => row.id)).toEqual(['EXPLORE-001', 'EXPLORE-002', 'ANALYZE-001', 'ANALYZE-002', 'DISCUSS-001', 'SYNTH-001']);
    expect(rows.find((row) => row.id === 'DISCUSS-001')!.exec_mode).toBe('interactive');
    expect(rows.find((row) => row.id === 'SYNTH-001')!.deps).toBe('DISCUSS-001');
    expect(planned(rows, 'analyze').waveCount).toBe(4);
  });

  test('quick mode has no discussion', () => {
    const rows = analyzeTasks({ topic: 'T', perspectives: ['a', 'b'], mode: 'quick' });
    expect(rows.some((row) => row.role === 'discussant')).toBe(false);
    expect(rows.find((row) => row.id === 'SYNTH-001')!.deps).toBe('ANALYZE-001;ANALYZE-002');
    planned(rows, 'analyze');
  });
});
