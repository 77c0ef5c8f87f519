import type { GrammarSchema } from '../schema/grammar-schema.js';
import type { TaskResult } from '../schema/result.js';
import { kPipelines, type PipelineName } from '../schema/session.js';
import { brainstormRules } from './brainstorm-rules.js';
import { challengerRule, kChallengerAnswerFields } from './challenger-rule.js';
import { kEvaluatorAnswerFields } from './evaluator-rule.js';

/*
 * What a pipeline asks of a finished task, by role: which roles it takes, the rules a
 * result is held to, what a model's answer must give, and which roles are checkpoints.
 * These sit below the executors, which apply them where a reply is made (in the worker,
 * on any machine); the rest of a pipeline (its decomposer, its interactive handlers) is
 * in pipelines/, above.
 */

/** How strictly a task's result is held to its pipeline's rules. */
export type ResultCheck =
  /** Any executor's result: what the pipeline can derive is filled in; nothing is refused. */
  | 'derive'
  /** A model's answer: what is missing or contradictory is refused, with a problem worded for a repair request. */
  | 'require';

/** A result as the pipeline's rules leave it, or why they refuse it. */
export type Normalised = { ok: true; result: TaskResult } | { ok: false; problem: string };

/**
 * What a model's answer for a role must give beyond every answer's `status` and `findings`:
 * JSON Schema properties that replace or add to the answer schema's own (a grammar makes a
 * constrained server give them), and which of them are required. What a schema cannot say
 * (numeric ranges, counts that must agree) is the role's result rule, in `require` mode.
 */
export interface RoleAnswerFields {
  properties: Readonly<Record<string, GrammarSchema>>;
  required: readonly string[];
}

/** A pipeline's rules for its roles' results. */
export interface RoleRules {
  /** The roles validation accepts; null for any non-empty role. */
  readonly roles: ReadonlySet<string> | null;
  /** The pipeline's rules for a finished result of a task of this role (the challenger's severity rule). */
  normaliseResult(role: string, result: TaskResult, check: ResultCheck): Normalised;
  /** Per role, what a model's answer must give (the model-answer contract); roles not here give the common fields only. */
  readonly answerFields: ReadonlyMap<string, RoleAnswerFields>;
  /**
   * The roles whose tasks are supervisor checkpoints: a model's answer for them must give
   * `supervision_verdict` (and may give `supervision_score`), which a `block` of stops
   * everything downstream. From a model's answer for any other role the two fields are
   * dropped with a warning: a model set `block` unasked.
   */
  readonly checkpointRoles: ReadonlySet<string>;
}

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
