import { z } from 'zod';
import { cleanText } from '../../../text/clean-text.js';
import type { AttemptReply } from '../../../executors/messages.js';
import { nestsDeeperThan } from '../../../text/json-depth.js';
import { compactDigest, replySigned, type Signing } from './signing.js';

/** What the coordinator expects of the reply of one awaited job. */
export interface ExpectedReply {
  signing: Signing;
  queue: string;
  jobId: string;
  /** The digest of the request this coordinator submitted for the job (signing.ts `compactDigest`). */
  digest: string;
  /** Told when a job ran another request than the one submitted. */
  warn: (message: string) => void;
}

/** A job's return value once its envelope is opened: the reply text, or why it is not merged. */
export type OpenedReply = { kind: 'opened'; reply: string } | { kind: 'refused'; reply: AttemptReply };

/** bullmq-worker.ts `sealReply`'s envelope (job-data.ts JobReplyEnvelope). */
const envelopeSchema = z
  .object({
    v: z.literal(1),
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    reply: z.string(),
    sig: z.string().optional(),
  })
  .strict();

/**
 * Opens a job's return value, which anyone who can write to the Redis could have written:
 * its signature must verify (with the secret: a forged or unsigned reply fails the attempt
 * as invalid output, naming the job, not retried: a retry would ask the same place), and the
 * request the worker ran must be the one this coordinator submitted (its digest; checked
 * without a secret too). A job that ran another request (its data changed in Redis, or a
 * second coordinator on the session id added it) is not merged: the attempt fails as
 * transient, so its retry runs the task's own request, and a warning says what happened.
 */
export function openJobReply(value: unknown, expected: ExpectedReply): OpenedReply {
  const refused = (why: string): OpenedReply => ({
    kind: 'refused',
    reply: { kind: 'error', errorClass: 'invalid-output', error: cleanText(`Invalid output: the reply of job ${expected.jobId} cannot be used: ${why}`) },
  });
  // The envelope is one flat object; anything nested in it is not one (and is not walked).
  if (typeof value !== 'string' || nestsDeeperThan(value, 1)) return refused('it is not a signed reply envelope (a worker of an older csv-wave, or someone writing to Redis)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return refused('its JSON does not parse');
  }
  const envelope = envelopeSchema.safeParse(parsed);
  if (!envelope.success) return refused('it is not a signed reply envelope (a worker of an older csv-wave, or someone writing to Redis)');
  const { digest, reply, sig } = envelope.data;
  const unsigned = expected.signing.refusal(replySigned(expected.queue, expected.jobId, digest, reply), sig);
  if (unsigned !== undefined) return refused(`${unsigned}; it is not merged`);
  if (compactDigest(digest) !== expected.digest) {
    expected.warn(
      `bullmq: job ${expected.jobId} ran a request that is not the one this run submitted (its digest ${digest.slice(0, 12)}… differs): ` +
        'its data was changed in Redis, or another coordinator uses this session id; its reply is not merged, the attempt is tried again',
    );
    return {
      kind: 'refused',
      reply: { kind: 'error', errorClass: 'transient', error: `The job ${expected.jobId} ran a request that is not the one this run submitted: its reply was not merged` },
    };
  }
  return { kind: 'opened', reply };
}
