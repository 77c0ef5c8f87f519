import { z } from 'zod';
import { kPriorities } from './row.js';

/*
 * Artifact contracts (seed 003): a result may carry a manifest for each artifact it made,
 * with the seed's fields, and a validator's result the validations of its dependencies'
 * artifacts. Both are checked here, where a result enters (schema/result.ts), and again on
 * the engine's main thread against the session (knowledge/artifact-registry.ts): a path
 * must name a file inside the session folder, and lists are bounded.
 */

/** Where an artifact stands: waiting for a validation, or validated either way. */
export const kValidationStatuses = [
  /** Made, not validated yet: its task's dependents wait (a validator may start). */
  'pending',
  /** Validated: its task's dependents may start. */
  'passed',
  /** Refused by a validation: a fix round is appended for its task, or its dependents are blocked. */
  'failed',
] as const;
export type ValidationStatus = (typeof kValidationStatuses)[number];

/** Names an artifact in the registry (`prd`, `code-auth`): a name, like a task id. */
export const kArtifactIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Manifests one result may carry (the artifacts per task cap's default). */
export const kMaxManifestsPerResult = 20;
/** Validations one result may carry. */
export const kMaxValidationsPerResult = 100;
/** Dependencies one manifest may name. */
export const kMaxManifestDependencies = 100;
/** Characters of a validation summary: a paragraph, not a report (the report is an artifact). */
export const kMaxValidationSummaryChars = 2000;
/** Characters of a manifest's path. */
export const kMaxManifestPathChars = 512;
/** Characters of the short texts of a manifest: its type, role and version. */
const kMaxLabelChars = 64;

/**
 * Why a manifest's `path` cannot name a file of the session folder, or undefined. Only what
 * the text says: the engine checks symlinks on the way when it registers the manifest.
 */
export function manifestPathProblem(path: string): string | undefined {
  if (path === '') return 'is empty: give the file relative to the session folder, such as artifacts/DRAFT-001/prd.md';
  if (path.length > kMaxManifestPathChars) return `is ${path.length} characters long, past the ${kMaxManifestPathChars} a path may have`;
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'holds a control character';
  if (path.includes('\\')) return 'holds a backslash: use / between folders';
  if (path.startsWith('/') || path.startsWith('~') || /^[A-Za-z]:/.test(path)) {
    return 'is absolute: give it relative to the session folder, such as artifacts/DRAFT-001/prd.md';
  }
  const parts = path.split('/');
  if (parts.includes('..')) return 'climbs out of the session folder (..): give a path inside it, such as artifacts/DRAFT-001/prd.md';
  if (parts.some((part) => part === '' || part === '.')) return 'has an empty or "." folder in it: name a file, such as artifacts/DRAFT-001/prd.md';
  if (parts[0] === '.csv-wave') return "is in the engine's folder .csv-wave, which holds no artifact";
  return undefined;
}

const artifactId = z.string().regex(kArtifactIdPattern, {
  error: (issue) => `${JSON.stringify(String(issue.input).slice(0, 80))} is no artifact id (letters, digits, . _ -, at most 64, as a task id)`,
});
const label = (what: string) =>
  z
    .string()
    .min(1, { error: `${what} is empty` })
    .max(kMaxLabelChars, { error: (issue) => `${what} is ${String(issue.input).length} characters long, past ${kMaxLabelChars}` });
const summary = z
  .string()
  .max(kMaxValidationSummaryChars, { error: (issue) => `is ${String(issue.input).length} characters long, past ${kMaxValidationSummaryChars}: put the details in an artifact` });
const status = <S extends readonly [string, ...string[]]>(values: S) =>
  z.enum(values, { error: (issue) => `must be ${values.join(', ')}, got ${JSON.stringify(issue.input)}` });

/** One artifact's manifest, as a result gives it (the seed's fields; the engine fills what is left out). */
export const artifactManifestSchema = z
  .object({
    artifact_id: artifactId,
    /** The role of the task that made it. @default the task's role */
    creator_role: label('creator_role').optional(),
    artifact_type: label('artifact_type'),
    /** Seed: a string; a number is taken and written as text. @default "1" */
    version: z.union([label('version'), z.number().finite()]).transform(String).optional(),
    path: z.string().superRefine((path, context) => {
      const problem = manifestPathProblem(path);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: `${JSON.stringify(path.slice(0, 80))} ${problem}` });
    }),
    dependencies: z
      .array(artifactId)
      .max(kMaxManifestDependencies, { error: (issue) => `names ${(issue.input as unknown[]).length} artifacts, past ${kMaxManifestDependencies}` })
      .optional(),
    validation_status: status(kValidationStatuses),
    validation_summary: summary.optional(),
    metadata: z
      .object({
        /** ISO 8601. @default when the engine registers it */
        created_at: z.iso.datetime({ offset: true, error: 'created_at must be an ISO 8601 time, such as 2025-01-31T12:00:00Z' }).optional(),
        /** The task that made it: the task whose result this is. */
        task_id: z.string().max(64).optional(),
        priority: z.enum(kPriorities, { error: 'priority must be P0, P1 or P2' }).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A validator's verdict on one artifact of its dependencies (the registry's, by id). */
export const artifactValidationSchema = z
  .object({
    artifact_id: artifactId,
    validation_status: status(['passed', 'failed'] as const),
    validation_summary: summary.optional(),
  })
  .strict();

/** The manifests of one result: at most kMaxManifestsPerResult. */
export const artifactManifestsSchema = z
  .array(artifactManifestSchema)
  .max(kMaxManifestsPerResult, { error: (issue) => `${(issue.input as unknown[]).length} manifests, past the ${kMaxManifestsPerResult} one result may give` });

/** The validations of one result: at most kMaxValidationsPerResult. */
export const artifactValidationsSchema = z
  .array(artifactValidationSchema)
  .max(kMaxValidationsPerResult, { error: (issue) => `${(issue.input as unknown[]).length} validations, past the ${kMaxValidationsPerResult} one result may give` });

export type ArtifactManifestInput = z.input<typeof artifactManifestSchema>;
export type ArtifactManifest = z.output<typeof artifactManifestSchema>;
export type ArtifactValidation = z.output<typeof artifactValidationSchema>;

/**
 * An artifact as the session's registry (artifact-registry.json) holds it: its latest
 * manifest with every field filled, and the task whose validation last set its status.
 */
export const registryEntrySchema = z
  .object({
    artifact_id: artifactId,
    creator_role: z.string().max(kMaxLabelChars),
    artifact_type: label('artifact_type'),
    version: label('version'),
    path: artifactManifestSchema.shape.path,
    dependencies: z.array(artifactId).max(kMaxManifestDependencies),
    validation_status: status(kValidationStatuses),
    validation_summary: summary,
    metadata: z
      .object({
        created_at: z.iso.datetime({ offset: true, error: 'created_at must be an ISO 8601 time' }),
        task_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'task_id is no task id' }),
        priority: z.enum(['', ...kPriorities]),
      })
      .strict(),
    /** The task whose validation set the status, when one did (not the maker's own). */
    validated_by: z.string().max(64).optional(),
  })
  .strict();
export type RegistryEntry = z.output<typeof registryEntrySchema>;

/** Artifacts one registry may hold. */
export const kMaxRegistryArtifacts = 100_000;

/** artifact-registry.json: written by the engine alone, read back (and checked) at a run's start. */
export const artifactRegistrySchema = z
  .object({
    version: z.literal(1, { error: 'version must be 1' }),
    artifacts: z.array(registryEntrySchema).max(kMaxRegistryArtifacts),
  })
  .strict();
export type ArtifactRegistryFile = z.output<typeof artifactRegistrySchema>;
