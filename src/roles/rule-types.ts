import type { GrammarSchema } from '../schema/grammar-schema.js';
import type { TaskResult } from '../schema/result.js';

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
  /** The roles validation accepts; null for any role (generic: a role is optional there). */
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
  /**
   * A model's answers carry artifact contracts and routes (route, artifact_manifests,
   * artifact_validations): their fields are in the answer schema and the system prompt. Off,
   * the prompt and the grammar stay without them (a command's or a module's result may still give them).
   */
  readonly contracts?: boolean;
}
