import { describe, expect, test } from 'vitest';
import { decideGc } from '../../src/pipelines/brainstorm/gc-controller.js';
import { nextGcRound } from '../../src/pipelines/brainstorm/gc-round.js';
import { brainstormTasks, kDefaultAngles } from '../../src/pipelines/brainstorm/decompose.js';
import { parseSeverity, signalFromSeverity } from '../../src/roles/severity.js';

describe('GC decision', () => {
  test('CRITICAL or HIGH above zero asks for revision below the round limit', () => {
    expect(decideGc('', 'CRITICAL:0 HIGH:2 MEDIUM:3 LOW:1', 1, 2).decision).toBe('REVISION_NEEDED');
    expect(decideGc('', 'CRITICAL:1 HIGH:0 MEDIUM:0 LOW:0', 1, 2).decision).toBe('REVISION_NEEDED');
    expect(decideGc('', 'CRITICAL:0 HIGH:0 MEDIUM:3 LOW:1', 1, 2).decision).toBe('CONVERGED');
  });

  test("the challenger's own signal wins over the counts", () => {
    expect(decideGc('CONVERGED', 'CRITICAL:0 HIGH:2', 1, 2).decision).toBe('CONVERGED');
    expect(decideGc('REVISION_NEEDED', '', 1, 2).decision).toBe('REVISION_NEEDED');
  });

  test('missing data converges', () => {
    const { decision, note } = decideGc('', '', 1, 2);
    expect(decision).toBe('CONVERGED');
    expect(note).toMatch(/no severity data/);
  });

  test('the round limit forces convergence', () => {
    const { decision, note } = decideGc('', 'CRITICAL:0 HIGH:2', 2, 2);
    expect(decision).toBe('CONVERGED');
    expect(note).toMatch(/round limit 2/);
  });

  test('severity counts are read in any order and case', () => {
    expect(parseSeverity('high=1, critical: 0, Low:4')).toEqual({ CRITICAL: 0, HIGH: 1, MEDIUM: 0, LOW: 4 });
    expect(parseSeverity('nothing here')).toBeUndefined();
    expect(signalFromSeverity('')).toBe('');
  });
});

describe('next GC round', () => {
  test('appends challenge, check and revision with the next free ids and moves the synthesizer', () => {
    const rows = brainstormTasks({ angles: kDefaultAngles, mode: 'full' });
    const gc = rows.find((row) => row.id === 'GC-CHECK-001')!;
    const changes = nextGcRound(rows, gc);
    expect(changes.add.map((row) => [row.id, row.deps, row.gc_round, row.exec_mode])).toEqual([
      ['CHALLENGE-002', 'IDEA-003', '1', 'csv-wave'],
      ['GC-CHECK-002', 'CHALLENGE-002', '2', 'interactive'],
      ['IDEA-004', 'GC-CHECK-002', '2', 'csv-wave'],
    ]);
    expect(changes.update).toEqual([
      { id: 'SYNTH-001', deps: 'IDEA-004', context_from: 'IDEA-001;IDEA-002;IDEA-003;CHALLENGE-001;CHALLENGE-002;IDEA-004' },
    ]);
    expect(changes.skip).toEqual([]);
  });
});
