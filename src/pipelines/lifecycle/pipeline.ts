import type { TaskRow } from '../../core/task.js';
import { roleRulesFor } from '../../roles/role-rules.js';
import { kSeedPipelineColumns, type Pipeline } from '../pipeline.js';
import { lifecycleTasks } from './decompose.js';
import { kLifecycleInjectionRules } from './injection-table.js';
import { QualityGate } from './quality-gate.js';
import { lifecycleSettings } from './settings.js';

/** The branches of the lifecycle's roles after PLAN-001, for a row whose `branch` cell is empty. */
const kRoleBranches: Readonly<Record<string, readonly string[]>> = {
  architect: ['architecture'],
  orchestrator: ['orchestrated', 'architecture'],
  executor: ['direct', 'orchestrated', 'architecture'],
};

/**
 * Specification to review (seed 003): analyst → writer → quality gate → planner → architect
 * → orchestrator → executor → tester → reviewer, with artifact contracts gating each step,
 * specialists injected by the seed's keyword table, and PLAN-001 routing by complexity.
 */
export const lifecyclePipeline = {
  name: 'lifecycle',
  columns: kSeedPipelineColumns,
  settings: lifecycleSettings,
  ...roleRulesFor('lifecycle'),
  // An interactive reviewer task is the quality gate; REVIEW-001 and IMPROVE tasks run through the executor.
  handlers: new Map([['reviewer', new QualityGate()]]),
  decompose: lifecycleTasks,
  branchOf: (row: TaskRow) => kRoleBranches[row.role] ?? [],
  validatorRoles: ['reviewer', 'tester'],
  injectionRules: kLifecycleInjectionRules,
} satisfies Pipeline;
