import { z } from 'zod';
import { cleanText } from '../../../text/clean-text.js';
import type { AttemptReply, RanOnWorker } from '../../../executors/messages.js';
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

/**
 * A job's return value once its envelope is opened: the reply text, with where and how long
 * it ran when the worker told it (an envelope of version 2); or why it is not merged.
 */
export type OpenedReply = { kind: 'opened'; reply: string; ran?: RanOnWorker } | { kind: 'refused'; reply: AttemptReply };

const kDigestPattern = /^[0-9a-f]{64}$/;

/**
 * bullmq-worker.ts `sealReply`'s envelope (job-data.ts JobReplyEnvelope): version 1, as every
 * worker before version 2 sends it, or version 2, with `ran` (read apart: runOf).
 */
const envelopeSchema = z.discriminatedUnion('v', [
  z.object({ v: z.literal(1), digest: z.string().regex(kDigestPattern), reply: z.string(), sig: z.string().optional() }).strict(),
  z.object({ v: z.literal(2), digest: z.string().regex(kDigestPattern), reply: z.string(), ran: z.record(z.string(), z.unknown()), sig: z.string().optional() }).strict(),
]);

/** A host name as a worker may have it (os.hostname: up to 64 bytes on Linux, 255 for a DNS name). */
const kMaxHostChars = 255;

/** The worker's own account of where and how long it ran the attempt. */
const ranSchema = z
  .object({
    host: z.string().min(1).max(kMaxHostChars),
    pid: z.number().int().min(0).max(2 ** 31),
    ms: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  })
  .strict();

/**
 * Where and how long a signed reply says it ran, or undefined when that part does not hold
 * what a worker writes: it decides nothing of the result, so a bad one costs only itself
 * (the coordinator's own timing and host are recorded, as for an older worker's reply). The
 * host is cleaned: it goes into attempts.ndjson and onto a terminal.
 */
function runOf(ran: unknown): RanOnWorker | undefined {
  const parsed = ranSchema.safeParse(ran);
  if (!parsed.success) return undefined;
  const host = cleanText(parsed.data.host);
  return host === '' ? undefined : { ...parsed.data, host };
}

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
  // The envelope is a flat object but for its `ran` (version 2); anything nested deeper is not one (and is not walked).
  if (typeof value !== 'string' || nestsDeeperThan(value, 2)) return refused('it is not a signed reply envelope (a worker of an older csv-wave, or someone writing to Redis)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return refused('its JSON does not parse');
  }
  const envelope = envelopeSchema.safeParse(parsed);
  if (!envelope.success) return refused('it is not a signed reply envelope (a worker of an older csv-wave, or someone writing to Redis)');
  const { digest, reply, sig } = envelope.data;
  // As it was parsed, not as the schema copied it: the signature covers the worker's own members.
  const ran = envelope.data.v === 2 ? (parsed as { ran: object }).ran : undefined;
  const unsigned = expected.signing.refusal(replySigned(expected.queue, expected.jobId, digest, reply, ran), sig);
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
  const place = ran === undefined ? undefined : runOf(ran);
  return place === undefined ? { kind: 'opened', reply } : { kind: 'opened', reply, ran: place };
}
