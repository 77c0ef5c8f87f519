import { kPipelines, type PipelineName } from '../schema/session.js';
import { brainstormRules } from './brainstorm-rules.js';
import { challengerRule, kChallengerAnswerFields } from './challenger-rule.js';
import { kEvaluatorAnswerFields } from './evaluator-rule.js';
import { kLifecycleRoles, kPlannerAnswerFields } from './lifecycle-rules.js';
import type { RoleRules } from './rule-types.js';

export type { Normalised, ResultCheck, RoleAnswerFields, RoleRules } from './rule-types.js';

/*
 * What a pipeline asks of a finished task, by role: which roles it takes, the rules a
 * result is held to, what a model's answer must give, and which roles are checkpoints.
 * These sit below the executors, which apply them where a reply is made (in the worker,
 * on any machine); the rest of a pipeline (its decomposer, its interactive handlers) is
 * in pipelines/, above.
 */

/** The brainstorm roles: a session naming no pipeline is brainstorm when all its roles are among them. */
export const kBrainstormRoles: ReadonlySet<string> = new Set(['ideator', 'challenger', 'synthesizer', 'evaluator', 'gc-controller']);

const kRoleRules: Record<PipelineName, RoleRules> = {
  brainstorm: {
    roles: kBrainstormRoles,
    normaliseResult: brainstormRules,
    answerFields: new Map([
      ['challenger', kChallengerAnswerFields],
      ['evaluator', kEvaluatorAnswerFields],
    ]),
    // Its gate is the GC check, whose verdict is computed from the challenger's counts; no
    // prompt of this pipeline asks a model for a supervision verdict.
    checkpointRoles: new Set<string>(),
  },
  analyze: {
    roles: new Set(['explorer', 'analyst', 'discussant', 'synthesizer']),
    // No role of this pipeline has a result rule.
    normaliseResult: (_role, result) => ({ ok: true, result }),
    answerFields: new Map(),
    // Its gate is the discussion gate, answered by a person; no prompt asks a model for a verdict.
    checkpointRoles: new Set<string>(),
  },
  lifecycle: {
    roles: kLifecycleRoles,
    // Its gates are the artifact validations and the quality gate, which read results as they are.
    normaliseResult: (_role, result) => ({ ok: true, result }),
    answerFields: new Map([['planner', kPlannerAnswerFields]]),
    checkpointRoles: new Set<string>(),
    contracts: true,
  },
  generic: {
    // Any non-empty role. A generic session may still hold rows of the other pipelines'
    // roles, and a `challenger`'s signal is still derived from its counts. A model's answer
    // is not held to the challenger's stricter form: the generic prompt does not ask for it.
    roles: null,
    normaliseResult: (role, result, check) => (check === 'derive' ? challengerRule(role, result, check) : { ok: true, result }),
    answerFields: new Map(),
    // A `supervisor` task (the seed's CHECKPOINT tasks; prompts/generic/supervisor.md) judges
    // the work upstream of it, and its `block` stops what comes after.
    checkpointRoles: new Set(['supervisor']),
  },
};

/** The role rules of a pipeline. */
export function roleRulesFor(name: PipelineName): RoleRules {
  return kRoleRules[name];
}

/**
 * The role rules of a pipeline name that came from outside (the prompt context an attempt's
 * request carries, which may come from anywhere); undefined when no pipeline has it.
 */
export function findRoleRules(name: string): RoleRules | undefined {
  return (kPipelines as readonly string[]).includes(name) ? kRoleRules[name as PipelineName] : undefined;
}
