/** The longest backoff before a retry, whatever the attempt. */
export const kMaxRetryDelayMs = 60_000;

/**
 * The delay before attempt `attempt + 1`: exponential from `baseMs`, capped, with jitter
 * between half and one and a half times it so that tasks failed together do not retry
 * together. `random` returns a number in [0, 1), like Math.random (injected: the core keeps no randomness).
 */
export function backoffMs(attempt: number, baseMs: number, random: () => number): number {
  const base = Math.min(kMaxRetryDelayMs, baseMs * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + random()));
}

/** Stop starting tasks once this many (or this percent of the run's tasks) failed for non-transient reasons. */
export type HaltPolicy = { count: number } | { percent: number };

/** The halt message once `failures` reached the policy's limit, or undefined. */
export function haltReason(halt: HaltPolicy | undefined, failures: number, taskCount: number): string | undefined {
  if (!halt) return undefined;
  const limit = 'count' in halt ? halt.count : Math.ceil((halt.percent / 100) * taskCount);
  if (failures < limit) return undefined;
  return `Halted: ${failures} task(s) failed (limit ${'count' in halt ? halt.count : `${halt.percent}%`}); no new tasks were started`;
}
