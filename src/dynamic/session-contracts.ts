import { branchCell } from '../core/routing.js';
import type { TaskRow } from '../core/task.js';
import { ArtifactRegistry } from '../knowledge/contracts/artifact-registry.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import type { SettingsFile } from '../pipelines/settings.js';
import type { InjectionRule, PipelineName, SessionConfig } from '../schema/session.js';
import { isFix, kDefaultMaxFixRounds } from './fix-rounds.js';
import { checkInjectionRules } from './injection.js';

/** A session's contracts between tasks, read and checked before a run's first task. */
export interface SessionContracts {
  /** artifact-registry.json, checked. */
  registry: ArtifactRegistry;
  /** Injection rules: session.json's `inject`, else the pipeline's. */
  rules: readonly InjectionRule[];
  /**
   * Whether a task may start while its dependencies' artifacts wait or failed: one of a
   * validator role (session.json's `validator_roles`, else the pipeline's), and a fix round's
   * fix (`<task>-fix-N`), whose work is to make them again.
   */
  validates: (row: TaskRow) => boolean;
  maxFixRounds: number;
  /** The branches of a task: its `branch` cell, else the pipeline's for its role. */
  branchOf: (row: TaskRow) => readonly string[];
}

/**
 * The contracts of a session, from session.json over its pipeline's defaults, and its
 * artifact registry: refused (WaveError INVALID_SESSION, exit 2) naming the file and line
 * of a rule that does not fit the pipeline, or of a registry entry a copy or a hand broke.
 */
export function readSessionContracts(sessionDir: string, pipeline: PipelineName, config: SessionConfig, file?: SettingsFile): SessionContracts {
  const own = pipelineFor(pipeline);
  const rules = config.inject ?? own.injectionRules ?? [];
  checkInjectionRules(rules, own.roles, pipeline, config.inject === undefined ? undefined : file);
  const validatorRoles = new Set(config.validator_roles ?? own.validatorRoles ?? []);
  const byRole = own.branchOf;
  return {
    registry: ArtifactRegistry.load(sessionDir),
    rules,
    validates: (row) => validatorRoles.has(row.role) || isFix(row.id),
    maxFixRounds: config.max_fix_rounds ?? kDefaultMaxFixRounds,
    branchOf: byRole === undefined ? branchCell : (row) => (row.branch.trim() === '' ? byRole(row) : branchCell(row)),
  };
}
