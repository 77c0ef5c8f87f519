import type OpenAI from 'openai';
import { findRoleRules } from '../../roles/role-rules.js';
import type { GrammarSchema } from '../../schema/grammar-schema.js';
import { kArtifactNamePattern } from '../../schema/result.js';
import { kArtifactIdPattern, kValidationStatuses } from '../../schema/artifact-manifest.js';
import { kBranchNamePattern } from '../../schema/row.js';

type ResponseFormat = OpenAI.ResponseFormatJSONSchema;

const kStringList: GrammarSchema = { type: 'array', items: { type: 'string' } };

/**
 * The fields every model answer may give, as the result schema (schema/result.ts) has them,
 * in the subset servers turn into a grammar. `findings` may not be empty: an answer of `{}`
 * or of only an error is what a grammar without `required` let a small model write.
 */
const kCommonProperties: Readonly<Record<string, GrammarSchema>> = {
  id: { type: 'string' },
  status: { type: 'string', enum: ['completed', 'failed'] },
  findings: { type: 'string', minLength: 1 },
  error: { type: 'string' },
  artifacts: {
    type: 'array',
    items: {
      type: 'object',
      properties: { name: { type: 'string', pattern: kArtifactNamePattern.source }, content: { type: 'string' } },
      required: ['name', 'content'],
      additionalProperties: false,
    },
  },
  discoveries: {
    type: 'array',
    items: {
      type: 'object',
      properties: { type: { type: 'string', minLength: 1 }, data: { type: 'object', additionalProperties: true } },
      required: ['type', 'data'],
      additionalProperties: false,
    },
  },
  key_findings: kStringList,
  decisions: kStringList,
  files_modified: kStringList,
  verification: { type: 'string', enum: ['self-validated', 'peer-reviewed', 'tested'] },
  wisdom: {
    type: 'object',
    properties: { learnings: kStringList, decisions: kStringList, conventions: kStringList, issues: kStringList },
    additionalProperties: false,
  },
  quality_score: { type: 'number' },
  // Free text unless the role's own fields say more (the brainstorm challenger's).
  gc_signal: { type: 'string' },
  severity_summary: { type: 'string' },
};

/** The fields of artifact contracts and routes, in the schema of a pipeline whose answers carry them (RoleRules.contracts). */
const kContractProperties: Readonly<Record<string, GrammarSchema>> = {
  // A branch name; a role that routes (the lifecycle's planner) gives it from an enum.
  route: { type: 'string', pattern: kBranchNamePattern.source },
  artifact_manifests: {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        artifact_id: { type: 'string', pattern: kArtifactIdPattern.source },
        creator_role: { type: 'string' },
        artifact_type: { type: 'string', minLength: 1 },
        version: { type: 'string' },
        path: { type: 'string', minLength: 1 },
        dependencies: kStringList,
        validation_status: { type: 'string', enum: [...kValidationStatuses] },
        validation_summary: { type: 'string' },
      },
      required: ['artifact_id', 'artifact_type', 'path', 'validation_status'],
      additionalProperties: false,
    },
  },
  artifact_validations: {
    type: 'array',
    items: {
      type: 'object',
      properties: {
        artifact_id: { type: 'string', pattern: kArtifactIdPattern.source },
        validation_status: { type: 'string', enum: ['passed', 'failed'] },
        validation_summary: { type: 'string' },
      },
      required: ['artifact_id', 'validation_status'],
      additionalProperties: false,
    },
  },
};

/** A checkpoint's verdict; its score's range (0 to 1) is checked on the answer (schema/result.ts). */
const kSupervisionProperties: Readonly<Record<string, GrammarSchema>> = {
  supervision_verdict: { type: 'string', enum: ['pass', 'warn', 'block'] },
  supervision_score: { type: 'number' },
};

/** Whether the pipeline marks the role's tasks as supervisor checkpoints; an unknown pipeline marks none. */
export function isCheckpoint(pipeline: string, role: string): boolean {
  return findRoleRules(pipeline)?.checkpointRoles.has(role) ?? false;
}

/**
 * The schema of a model answer for a role of a pipeline: the common fields, those of
 * artifact contracts and routes where the pipeline's answers carry them, the role's own
 * (Pipeline.answerFields), and the supervision fields for a checkpoint only, so that a
 * constrained server cannot write them for any other task. No other field is allowed.
 */
export function answerSchema(pipeline: string, role: string): GrammarSchema {
  const rules = findRoleRules(pipeline);
  const own = rules?.answerFields.get(role);
  const checkpoint = isCheckpoint(pipeline, role);
  return {
    type: 'object',
    properties: { ...kCommonProperties, ...(rules?.contracts === true ? kContractProperties : {}), ...own?.properties, ...(checkpoint ? kSupervisionProperties : {}) },
    required: ['status', 'findings', ...(own?.required ?? []), ...(checkpoint ? ['supervision_verdict'] : [])],
    additionalProperties: false,
  };
}

const formats = new Map<string, ResponseFormat>();

/** The request's response_format for a role's answers, built once per pipeline and role. */
export function answerFormat(pipeline: string, role: string): ResponseFormat {
  const key = JSON.stringify([pipeline, role]);
  let format = formats.get(key);
  if (format === undefined) {
    format = {
      type: 'json_schema',
      // strict: false: OpenAI's strict mode wants every property required and no minLength
      // or pattern; the grammar of a local server applies the schema as it is.
      json_schema: { name: 'task_result', strict: false, schema: answerSchema(pipeline, role) as unknown as Record<string, unknown> },
    };
    formats.set(key, format);
  }
  return format;
}
