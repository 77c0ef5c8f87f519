/**
 * When to stop starting tasks because too many failed (like GNU parallel's --halt soon,fail=N):
 * once this many (or this percent of the run's tasks) failed for non-transient reasons.
 */
export type HaltPolicy = { count: number } | { percent: number };

/** How the core schedules; time and randomness come in here, never from the platform. */
export interface CoreOptions {
  schedule: 'waves' | 'eager';
  /** csv-wave tasks running at once; the interactive lane runs one more, on its own. */
  concurrency: number;
  /** Retries of an attempt whose error class is in `retryable`. */
  retries: number;
  retryBaseMs: number;
  halt: HaltPolicy | undefined;
  /** Error classes retried with a backoff (rate-limited, transient, timeout). */
  retryable: ReadonlySet<string>;
  /** A number in [0, 1), for the backoff's jitter. */
  random: () => number;
}
