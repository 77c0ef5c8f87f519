import { z } from 'zod';
import { artifactManifestsSchema, artifactValidationsSchema } from './artifact-manifest.js';
import { discoveryInputSchema } from './discovery.js';
import { kBranchNamePattern } from './row.js';

/** Names an artifact file `artifacts/<task id>/<name>.md`; it must not be able to leave that folder. */
export const kArtifactNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What an executor returns for a task (DESIGN.md section 6). Validated once, where it enters. */
export const taskResultSchema = z
  .object({
    id: z.string().optional(),
    status: z.enum(['completed', 'failed']).default('completed'),
    findings: z.string().default(''),
    gc_signal: z.string().optional(),
    severity_summary: z.string().optional(),
    error: z.string().optional(),
    discoveries: z.array(discoveryInputSchema).optional(),
    wisdom: z
      .object({
        learnings: z.array(z.string()).optional(),
        decisions: z.array(z.string()).optional(),
        conventions: z.array(z.string()).optional(),
        issues: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    artifacts: z
      .array(z.object({ name: z.string().regex(kArtifactNamePattern), content: z.string() }).strict())
      .optional(),
    key_findings: z.array(z.string()).optional(),
    decisions: z.array(z.string()).optional(),
    files_modified: z.array(z.string()).optional(),
    verification: z.enum(['self-validated', 'peer-reviewed', 'tested']).optional(),
    quality_score: z.number().nullable().optional(),
    supervision_verdict: z.enum(['pass', 'warn', 'block']).nullable().optional(),
    supervision_score: z.number().min(0).max(1).nullable().optional(),
    /** The branch this task chose for its dependents (conditional routing, core/routing.ts). */
    route: z
      .string()
      .regex(kBranchNamePattern, { error: (issue) => `${JSON.stringify(String(issue.input).slice(0, 40))} is no branch name (letters, digits, . _ -, at most 32)` })
      .optional(),
    /** Manifests of the artifacts this task made (artifact contracts, schema/artifact-manifest.ts). */
    artifact_manifests: artifactManifestsSchema.optional(),
    /** Verdicts on the artifacts of the tasks upstream of this one (a validator's). */
    artifact_validations: artifactValidationsSchema.optional(),
  })
  .strict();

export type TaskResult = z.output<typeof taskResultSchema>;
export type TaskResultInput = z.input<typeof taskResultSchema>;
