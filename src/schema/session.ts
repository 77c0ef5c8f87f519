import { z } from 'zod';
import { kMaxTimerSeconds } from './timer-range.js';

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

/** How a command's stdout becomes its result (`--output`, session.json `output`). */
export const kOutputModes = [
  /** A JSON object with a `status` or `findings` key (all of stdout, or its last line) is the result; anything else is text. */
  'auto',
  /** stdout must hold a result object (all of it, or its last line); text fails the task. */
  'result',
  /** stdout is the findings, whatever it looks like, JSON included. */
  'text',
] as const;
export type OutputMode = (typeof kOutputModes)[number];

/**
 * session.json: written by `init`, optional. A session that names no pipeline is brainstorm
 * when all its roles are brainstorm roles, else generic (session/session.ts settlePipeline).
 */
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
    /** Seconds before an attempt is killed; at most kMaxTimerSeconds (24 days), which Node's timers can wait. */
    timeout: z.number().positive().max(kMaxTimerSeconds, `Too big: at most ${kMaxTimerSeconds} seconds (24 days)`).optional(),
    retries: z.number().int().min(0).optional(),
    schedule: z.enum(['waves', 'eager']).optional(),
    /** How a command's stdout is read (default auto). */
    output: z.enum(kOutputModes).optional(),
    /** Bytes of a command's stdout kept per attempt (default 1048576); the findings say what was dropped. */
    max_stdout_bytes: z.number().int().min(1024).optional(),
    /** Artifact files per task, its findings' output file included (default 20); further ones are dropped, said in its findings. */
    max_artifacts_per_task: z.number().int().positive().optional(),
    /** Bytes of artifacts per task, all files together (default 10485760); past it they are dropped, said in its findings. */
    max_artifact_bytes: z.number().int().min(1024).optional(),
    /** Bytes of one discoveries.ndjson line (default 65536); a larger discovery is dropped with a warning. */
    max_discovery_line_bytes: z.number().int().min(1024).optional(),
    discovery_files: z.enum(['always', 'when-rich']).optional(),
    /** Most task rows tasks.csv may hold; a file with more is refused, never cut (default 1,000,000). */
    max_rows: z.number().int().positive().optional(),
    /** Where tasks run: `local` (default), or `bullmq` with the Redis `url` (else CSV_WAVE_REDIS_URL); `--backend` wins. */
    backend: z
      .object({
        type: z.enum(['local', 'bullmq']),
        url: z.string().optional(),
        /** With bullmq: attempts started across all workers, `N/s` or `N/min` (`--rate` wins). */
        rate: z.string().optional(),
      })
      .strict()
      .optional(),
    /**
     * Prices by model name, in US dollars per million tokens: `input`, `output`, optional
     * `cached_input` (prompt tokens served from the server's cache; `input` when absent) and
     * `batch_discount` (the fraction the Batch API takes off, 0.5 for half price).
     */
    pricing: z
      .record(
        z.string().min(1),
        z
          .object({
            input: z.number().min(0),
            output: z.number().min(0),
            cached_input: z.number().min(0).optional(),
            batch_discount: z.number().min(0).max(1).optional(),
          })
          .strict(),
      )
      .optional(),
    /** Send the model tasks through OpenAI's Batch API (the openai executor only; default false). */
    batch: z.boolean().optional(),
    /** Batch mode: a bad answer's repair goes into the next batch or at once, synchronously (default batch). */
    batch_repair: z.enum(['batch', 'sync']).optional(),
  })
  .strict();

export type SessionConfig = z.output<typeof sessionConfigSchema>;
