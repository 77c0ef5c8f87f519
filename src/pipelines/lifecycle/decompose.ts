import type { TaskRow } from '../../core/task.js';
import { newRow } from '../new-row.js';

/** How much of the lifecycle `init` lays out (seed 003). */
export const kLifecycleModes = [
  /** The specification: research, drafts and the quality gate; no plan. */
  'spec',
  /** The implementation from a given specification file: plan, implementation, tests, review. */
  'impl',
  /** Both: specification, then implementation. */
  'full',
] as const;
export type LifecycleMode = (typeof kLifecycleModes)[number];

/** The executors of the implementation fan-out. */
const kImplTasks = 2;
/** Every branch PLAN-001 may route to: an executor runs on each. */
const kAllRoutes = 'direct;orchestrated;architecture';

export interface LifecyclePlan {
  topic: string;
  mode: LifecycleMode;
  /** `impl` mode: the specification, as a path relative to the session folder (init copies it into `spec/`). */
  specPath?: string | undefined;
}

/** The drafts of the specification: the seed's spec/ folder, one writer each. */
const kDrafts = [
  { title: 'Product brief', what: 'the product brief', detail: 'goals, users, scope and success metrics', type: 'product-brief' },
  { title: 'Requirements', what: 'the requirements', detail: 'functional and non-functional, each with acceptance criteria', type: 'requirements' },
  { title: 'Architecture and epics', what: 'the architecture and epics', detail: 'components, interfaces, the flow of information, and the epics that deliver them', type: 'architecture' },
] as const;

const manifestHint = (type: string, id: string) =>
  `Give the document as an artifact and its manifest in artifact_manifests (artifact_type ${type}, path artifacts/${id}/<name>.md, validation_status pending: the quality gate validates it).`;

/**
 * The lifecycle's tasks (seed 003), with the seed's priorities (P0 research, drafts, plan and
 * the implementation; P1 the quality gate, tests and review):
 * RESEARCH-001 (analyst) → DRAFT-001..003 (writer) → QUALITY-001 (reviewer's check, then the
 * quality gate: interactive) → PLAN-001 (planner, routes by complexity) → ARCH-001 (architect,
 * branch architecture) → ORCH-001 (orchestrator, branches orchestrated and architecture) →
 * IMPL-001..002 (executor, every branch) → TEST-001 (tester) → REVIEW-001 (reviewer).
 * `spec` stops after QUALITY-001; `impl` starts at PLAN-001 from the given specification.
 */
export function lifecycleTasks({ topic, mode, specPath }: LifecyclePlan): TaskRow[] {
  const rows: TaskRow[] = [];
  const spec: string[] = [];
  if (mode !== 'impl') {
    rows.push(
      newRow({
        id: 'RESEARCH-001',
        title: 'Research',
        description: `Research "${topic}": the problem, its users, constraints, prior art and open questions. Give the facts the specification will rest on.`,
        role: 'analyst',
        priority: 'P0',
      }),
    );
    // In parallel: a draft's artifacts wait for the quality gate, so no draft can start after another.
    kDrafts.forEach((draft, index) => {
      const id = `DRAFT-00${index + 1}`;
      rows.push(
        newRow({
          id,
          title: draft.title,
          description: `Draft ${draft.what} of "${topic}": ${draft.detail}. ${manifestHint(draft.type, id)}`,
          role: 'writer',
          deps: 'RESEARCH-001',
          context_from: 'RESEARCH-001',
          priority: 'P0',
        }),
      );
      spec.push(id);
    });
    rows.push(
      newRow({
        id: 'QUALITY-001',
        title: 'Quality check of the specification',
        description:
          `Check the specification of "${topic}" (${spec.join(', ')}) on five dimensions, each scored 0 to 100: completeness, consistency, ` +
          `traceability, depth and coverage. Give the scores as a discovery of type quality_scores (data: one number per dimension), and what to improve in the findings. ` +
          `Then the quality gate asks what follows: resume, improve [dimension], revise <TASK-ID> <feedback>, recheck, or feedback <text>.`,
        role: 'reviewer',
        deps: spec.join(';'),
        context_from: spec.join(';'),
        exec_mode: 'interactive',
        priority: 'P1',
      }),
    );
    if (mode === 'spec') return rows;
  }
  const planDeps = mode === 'impl' ? [] : [...spec, 'QUALITY-001'];
  const source = mode === 'impl' ? `the specification in ${specPath ?? 'spec/'}` : `the specification (${spec.join(', ')}) the quality gate passed`;
  rows.push(
    newRow({
      id: 'PLAN-001',
      title: 'Implementation plan',
      description:
        `Plan the implementation of "${topic}" from ${source}: modules, their dependencies, and what each of ${kImplTasks} executors builds. ` +
        `Assess the complexity and give route: direct (1-2 modules, shallow dependencies), orchestrated (3-4 modules) or architecture (5 or more, deep dependencies).`,
      role: 'planner',
      deps: planDeps.join(';'),
      context_from: planDeps.join(';'),
      priority: 'P0',
    }),
    newRow({
      id: 'ARCH-001',
      title: 'Architecture design',
      description: `Design the architecture of "${topic}" for the plan: components, interfaces, data flow, and the decisions with their reasons.`,
      role: 'architect',
      deps: 'PLAN-001',
      context_from: 'PLAN-001',
      branch: 'architecture',
      priority: 'P0',
    }),
    newRow({
      id: 'ORCH-001',
      title: 'Coordinate the modules',
      description: `Coordinate the implementation of "${topic}" across its modules: the order, the interfaces each executor must keep, and how the parts join.`,
      role: 'orchestrator',
      deps: 'PLAN-001;ARCH-001',
      context_from: 'PLAN-001;ARCH-001',
      branch: 'orchestrated;architecture',
      priority: 'P0',
    }),
  );
  const impls: string[] = [];
  for (let part = 1; part <= kImplTasks; part++) {
    const id = `IMPL-00${part}`;
    impls.push(id);
    rows.push(
      newRow({
        id,
        title: `Implementation, part ${part} of ${kImplTasks}`,
        description:
          `Implement part ${part} of ${kImplTasks} of "${topic}" as the plan assigns it. Give a manifest of what you built ` +
          `(artifact_type code, validation_status passed once your own checks pass, else failed).`,
        role: 'executor',
        deps: 'PLAN-001;ORCH-001',
        context_from: 'PLAN-001;ARCH-001;ORCH-001',
        branch: kAllRoutes,
        priority: 'P0',
      }),
    );
  }
  rows.push(
    newRow({
      id: 'TEST-001',
      title: 'Tests',
      description:
        `Write and run the tests of "${topic}" for ${impls.join(', ')}. Give artifact_validations for their artifacts (passed or failed, with a summary), ` +
        `and the test report as an artifact of your own.`,
      role: 'tester',
      deps: impls.join(';'),
      context_from: ['PLAN-001', ...impls].join(';'),
      priority: 'P1',
    }),
    newRow({
      id: 'REVIEW-001',
      title: 'Code review',
      description: `Review the implementation of "${topic}" against the plan and the tests: correctness, security, maintainability; list what must change.`,
      role: 'reviewer',
      deps: 'TEST-001',
      context_from: ['PLAN-001', ...impls, 'TEST-001'].join(';'),
      priority: 'P1',
    }),
  );
  return rows;
}
