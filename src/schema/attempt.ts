import { z } from 'zod';

/** How one attempt of a task ended. */
export const kAttemptOutcomes = [
  /** The task finished completed. */
  'completed',
  /** The task finished failed (no attempt left, or a failure that is not retried). */
  'failed',
  /** The attempt failed and the task was tried again. */
  'retried',
] as const;

/** One line of attempts.ndjson: one finished attempt of one task (README "Seeing a run"). */
export const attemptLineSchema = z
  .object({
    /** The run that made the attempt; every line of one run shares it. */
    run: z.string().min(1),
    task: z.string().min(1),
    /** 1 for the first attempt of the task in this run. */
    attempt: z.number().int().min(1),
    wave: z.number().int().min(0),
    /** ISO 8601 with milliseconds. */
    start: z.string(),
    end: z.string(),
    /** `end` − `start`: for an attempt a `csv-wave worker` ran (--backend bullmq), its execution time there. */
    duration_ms: z.number().min(0),
    /**
     * With --backend bullmq, an attempt a worker ran: how long its job waited besides (for a
     * worker to take it, and for its reply to come back), measured by the coordinator. Absent
     * for an attempt that ran on the engine's machine, from a worker that did not tell its
     * time (an older csv-wave), and on lines written before it existed.
     */
    queued_ms: z.number().int().min(0).optional(),
    outcome: z.enum(kAttemptOutcomes),
    /** rate-limited, transient, timeout, invalid-output, task-failure or worker-crash; empty when it completed. */
    error_class: z.string(),
    /** The error's text (cut at 2,000 characters); empty when it completed. */
    error: z.string(),
    /** Worker thread id that ran it; null when no worker thread answered (an interactive task, a reused exploration, a thread that died). */
    thread: z.number().int().nullable(),
    /** Host and pid of the process that ran it: the engine's, or the `csv-wave worker`'s that told them (--backend bullmq). */
    host: z.string(),
    pid: z.number().int(),
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    /** The task's input key (docs/cache.md): the SHA-256 its result was made or found with; absent when it has none (an interactive or worktree task). */
    key: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    /** The key without the discoveries board's and wisdom's digests, when the task's prompt shows them: what `status` compares to call a task stale. */
    input_key: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    /** The result came from the cache: the task did not execute. */
    cached: z.literal(true).optional(),
    /** With `cached`: what the cached result's model requests cost when it was made, in US dollars, not spent again. */
    saved_usd: z.number().min(0).optional(),
  })
  .strict();

export type AttemptLine = z.infer<typeof attemptLineSchema>;
export type AttemptEnd = (typeof kAttemptOutcomes)[number];
