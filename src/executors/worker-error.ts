import { cleanText } from '../text/clean-text.js';
import type { FailedAttemptReply } from './messages.js';
import { describe } from './module.js';
import { scrubSecrets } from '../text/secret-scrubber.js';

/**
 * The reply of an attempt that threw before it had an outcome (in the worker, or while the
 * engine read its context): a worker crash, whose rules (one more attempt, on a thread of
 * its own) apply, its message cleaned and scrubbed like any task output.
 */
export function workerErrorReply(error: unknown): FailedAttemptReply {
  return { kind: 'error', errorClass: 'worker-crash', error: scrubSecrets(cleanText(`Worker error: ${describe(error)}`)) };
}
