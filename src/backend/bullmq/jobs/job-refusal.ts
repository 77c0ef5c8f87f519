import { cleanText } from '../../../text/clean-text.js';
import { cutError } from '../../../executors/reply-rules.js';
import type { AttemptReply } from '../../../executors/messages.js';
import { scrubSecrets } from '../../../text/secret-scrubber.js';
import { lostJobReply } from './job-replies.js';
import { workerShown } from '../session/worker-presence.js';

/**
 * How a worker says it did not run a job (its signature did not verify, or its executor or
 * model server is not one the worker allows): the job fails in Redis with this reason, which
 * the coordinator shows as the attempt's error.
 */
const kRefusedPrefix = 'csv-wave: refused by worker ';

/** The failure reason of a job worker `name` (`<host>:<pid>`) refused, and why. */
export function refusalReason(name: string, why: string): string {
  return `${kRefusedPrefix}${name}: ${why}`;
}

/**
 * The reply of a job BullMQ failed: a refusal fails the attempt as a task failure (not
 * retried: the same workers would refuse it again); any other failure is a lost job.
 * The reason is text from Redis, cleaned and cut as any error.
 */
export function failedJobReply(reason: string | undefined): AttemptReply {
  if (reason === undefined || !reason.startsWith(kRefusedPrefix)) return lostJobReply(reason);
  const rest = reason.slice(kRefusedPrefix.length);
  const cut = rest.indexOf(': ');
  const who = cut < 0 ? 'a worker' : `worker ${workerShown(rest.slice(0, cut))}`;
  return {
    kind: 'error',
    errorClass: 'task-failure',
    error: cutError(scrubSecrets(cleanText(`Refused by ${who}: ${cut < 0 ? rest : rest.slice(cut + 2)}`))),
  };
}
