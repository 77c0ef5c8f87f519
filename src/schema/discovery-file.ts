import { z } from 'zod';

/** `discoveries/<id>.json`, written for every finished task (seed 000, DESIGN.md section 7). */
export const discoveryFileSchema = z
  .object({
    task_id: z.string(),
    worker: z.string(),
    timestamp: z.string(),
    type: z.string(),
    status: z.enum(['completed', 'failed', 'skipped']),
    findings: z.string().max(500),
    quality_score: z.number().nullable(),
    supervision_verdict: z.enum(['pass', 'warn', 'block']).nullable(),
    error: z.string().nullable(),
    data: z
      .object({
        key_findings: z.array(z.string().max(99)).max(5),
        decisions: z.array(z.string()),
        files_modified: z.array(z.string()),
        verification: z.enum(['self-validated', 'peer-reviewed', 'tested']).nullable(),
      })
      .strict(),
    artifacts_produced: z.array(z.string()),
  })
  .strict();

export type DiscoveryFile = z.infer<typeof discoveryFileSchema>;
