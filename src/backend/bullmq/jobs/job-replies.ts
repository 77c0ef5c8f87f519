import { cleanText } from '../../../text/clean-text.js';
import { cutError } from '../../../executors/reply-rules.js';
import type { AttemptReply } from '../../../executors/messages.js';
import { scrubSecrets } from '../../../text/secret-scrubber.js';

/** A job BullMQ failed: its worker died under it more often than the stalled-job check allows, or it could not run it. */
export function lostJobReply(reason: string | undefined): AttemptReply {
  return {
    kind: 'error',
    errorClass: 'worker-crash',
    error: cutError(scrubSecrets(cleanText(`The job was lost by its workers: ${reason ?? 'no reason given'}`))),
  };
}

/** A job that went through its add but is no longer in Redis: no worker will ever answer; retried (a fresh job, the next attempt's). */
export function vanishedJobReply(id: string): AttemptReply {
  return { kind: 'error', errorClass: 'transient', error: `The job ${id} vanished from Redis (did Redis restart without its data?)` };
}

/** A job Redis did not take; retried. */
export function unaddedJobReply(error: unknown): AttemptReply {
  return { kind: 'error', errorClass: 'transient', error: cleanText(`The job could not be added to Redis: ${String(error)}`) };
}
