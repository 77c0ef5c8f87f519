import { describe, expect, test } from 'vitest';
import { emptyRow } from '../../src/core/task.js';
import { ChangeBuilder } from '../../src/dynamic/change-builder.js';
import { checkInjectionRules } from '../../src/dynamic/injection.js';
import { rootOf } from '../../src/dynamic/fix-rounds.js';
import { lifecyclePipeline } from '../../src/pipelines/lifecycle/pipeline.js';
import { QualityGate } from '../../src/pipelines/lifecycle/quality-gate.js';
import { newRow } from '../../src/pipelines/new-row.js';

describe('the lifecycle pipeline object', () => {
  test('the quality gate handles interactive reviewer tasks; reviewers and testers validate; the roles after PLAN-001 have branches', () => {
    expect(lifecyclePipeline.handlers.get('reviewer')).toBeInstanceOf(QualityGate);
    expect(lifecyclePipeline.validatorRoles).toEqual(['reviewer', 'tester']);
    const row = (role: string) => Object.assign(emptyRow(), { role });
    expect(lifecyclePipeline.branchOf(row('architect'))).toEqual(['architecture']);
    expect(lifecyclePipeline.branchOf(row('orchestrator'))).toEqual(['orchestrated', 'architecture']);
    expect(lifecyclePipeline.branchOf(row('executor'))).toEqual(['direct', 'orchestrated', 'architecture']);
    expect(lifecyclePipeline.branchOf(row('tester'))).toEqual([]);
  });

  test("the seed's injection table is a valid set of rules for the pipeline's roles", () => {
    expect(() => checkInjectionRules(lifecyclePipeline.injectionRules, lifecyclePipeline.roles, 'lifecycle')).not.toThrow();
    expect(lifecyclePipeline.injectionRules.map((rule) => `${rule.id} ${rule.after ? `after ${rule.after}` : `beside ${rule.beside}`}`)).toEqual([
      'SECURITY-001 after PLAN-001',
      'PERF-001 after IMPL-*',
      'DATA-001 beside IMPL-*',
      'DEVOPS-001 after IMPL-*',
      'ML-001 beside IMPL-*',
    ]);
  });

  test('the root of a fix round: a fix or a recheck names the task it started from', () => {
    expect(rootOf('IMPL-001')).toBe('IMPL-001');
    expect(rootOf('IMPL-001-fix-2')).toBe('IMPL-001');
    expect(rootOf('TEST-001-recheck-1')).toBe('TEST-001');
  });
});

describe('ChangeBuilder: several changes of one result, one session change', () => {
  test('a later change sees the earlier ones; a row added and rewired is added rewired; a base row is never written', () => {
    const base = [newRow({ id: 'A' }), newRow({ id: 'B', deps: 'A' })];
    const builder = new ChangeBuilder(base);
    builder.add({ add: [newRow({ id: 'N', deps: 'A' })], update: [{ id: 'B', deps: 'A;N' }], skip: [], gates: [{ id: 'A', gate: 'pending' }] });
    expect(builder.row('B')!.deps).toBe('A;N');
    builder.wire('N', 'X', true);
    builder.wire('B', 'X', false);
    builder.add({ add: [], update: [], skip: [{ id: 'B', error: 'first' }, { id: 'B', error: 'second' }], gates: [{ id: 'A', gate: 'passed' }] });
    expect(builder.changes()).toEqual({
      add: [expect.objectContaining({ id: 'N', deps: 'A;X', context_from: 'X' })],
      update: [{ id: 'B', deps: 'A;N;X' }],
      skip: [{ id: 'B', error: 'first' }],
      gates: [{ id: 'A', gate: 'passed' }],
    });
    expect(base[1]!.deps).toBe('A');
    expect(new ChangeBuilder(base).empty).toBe(true);
  });
});
