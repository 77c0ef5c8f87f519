import type { CoreOptions, HaltPolicy } from '../core-options.js';

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

/** The halt message once `failures` reached the policy's limit, or undefined. */
export function haltReason(halt: HaltPolicy | undefined, failures: number, taskCount: number): string | undefined {
  if (!halt) return undefined;
  const limit = 'count' in halt ? halt.count : Math.ceil((halt.percent / 100) * taskCount);
  if (failures < limit) return undefined;
  return `Halted: ${failures} task(s) failed (limit ${'count' in halt ? halt.count : `${halt.percent}%`}); no new tasks were started`;
}

/** What becomes of an attempt that came back with an error (other than the session's io). */
export interface ErrorVerdict {
  /** Try again (unless the run stopped meanwhile), after `delayMs`. */
  retry: boolean;
  delayMs: number;
  /** The retry is the one after a worker crash: it runs on a thread of its own. */
  crash: boolean;
  /** A failure for --halt: not a retryable class, even once its retries ran out. */
  countsForHalt: boolean;
}

export function judgeError(
  reply: { errorClass: string; retryAfterMs?: number | undefined },
  attempts: number,
  crashRetried: boolean,
  options: Pick<CoreOptions, 'retryable' | 'retries' | 'retryBaseMs' | 'random'>,
): ErrorVerdict {
  const retryableClass = options.retryable.has(reply.errorClass);
  // A worker can die under a task that did nothing wrong (another task on its thread was
  // ended, or spent its memory): one more attempt on a fresh worker tells the two apart.
  const crash = reply.errorClass === 'worker-crash' && !crashRetried;
  const retry = crash || (retryableClass && attempts <= options.retries);
  const delayMs = !retry || crash ? 0 : (reply.retryAfterMs ?? backoffMs(attempts, options.retryBaseMs, options.random));
  return { retry, delayMs, crash, countsForHalt: !retryableClass };
}
