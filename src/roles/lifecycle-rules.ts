import type { RoleAnswerFields } from './rule-types.js';

/** The roles of the lifecycle pipeline (seed 003): the core pipeline's, the consulting ones and the specialists it injects. */
export const kLifecycleRoles: ReadonlySet<string> = new Set([
  'analyst',
  'writer',
  'reviewer',
  'planner',
  'architect',
  'orchestrator',
  'executor',
  'tester',
  'fe-developer',
  'fe-qa',
  'security-expert',
  'performance-optimizer',
  'data-engineer',
  'devops-engineer',
  'ml-engineer',
]);

/** The branches PLAN-001 routes to by complexity (seed 003: low, medium, high). */
export const kLifecycleRoutes = ['direct', 'orchestrated', 'architecture'] as const;

/**
 * What a model's planner answer must give: the route of its complexity, which the lifecycle's
 * tasks after PLAN-001 are on (core/routing.ts). Without one, nothing would be routed.
 */
export const kPlannerAnswerFields: RoleAnswerFields = {
  properties: { route: { type: 'string', enum: [...kLifecycleRoutes] } },
  required: ['route'],
};
