import { z } from 'zod';

/** The pipelines csv-wave knows (DESIGN.md section 1). */
export const kPipelines = [
  /** ideator → challenger → GC check → revision → synthesizer → evaluator (seed 004). */
  'brainstorm',
  /** explorer → analyst → discussant → synthesizer (seed 002). */
  'analyze',
  /** Any non-empty role: plain batch work. */
  'generic',
] as const;
export type PipelineName = (typeof kPipelines)[number];

/** session.json: written by `init`, optional; a session without it is a brainstorm session. */
export const sessionConfigSchema = z
  .object({
    pipeline: z.enum(kPipelines).default('brainstorm'),
    topic: z.string().optional(),
    mode: z.string().optional(),
    max_gc_rounds: z.number().int().min(0).optional(),
    bom: z.boolean().optional(),
    prev_context_cap: z.number().int().positive().optional(),
    executor: z
      .object({
        type: z.enum(['command', 'module', 'openai']),
        cmd: z.string().optional(),
        module: z.string().optional(),
        model: z.string().optional(),
        base_url: z.string().optional(),
      })
      .strict()
      .optional(),
    concurrency: z.number().int().positive().optional(),
    timeout: z.number().positive().optional(),
    retries: z.number().int().min(0).optional(),
    schedule: z.enum(['waves', 'eager']).optional(),
  })
  .strict();

export type SessionConfig = z.output<typeof sessionConfigSchema>;
