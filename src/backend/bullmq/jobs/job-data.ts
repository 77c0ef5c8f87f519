import type { AttemptRequest, RanOnWorker } from '../../../executors/messages.js';

/** The name of every csv-wave job (one kind of job per queue). */
export const kJobName = 'attempt';

/**
 * What a job carries: the attempt's whole request, as the local pool gets it, with its
 * digest and the coordinator's signature (signing.ts). It holds no secret: the openai
 * executor's key is read by each worker from its own environment (ExecutorSpec), commands
 * get the worker's environment, and the signing secret never goes through Redis.
 */
export interface AttemptJobData {
  request: AttemptRequest;
  /** SHA-256 (hex) of the request's canonical JSON (signing.ts `requestDigest`). */
  digest: string;
  /** HMAC of `jobSigned(queue, jobId, digest)`; absent only from a coordinator run with `--insecure-no-secret`. */
  sig?: string;
  /**
   * The newest reply envelope the coordinator reads: 2 takes the worker's own host, pid and
   * execution time (`ran`). Absent from an older coordinator, which reads version 1 only: a
   * worker then replies in version 1, so that a worker upgraded first serves it still. Not
   * signed: whoever changes it in Redis changes only what is shown (a coordinator reads both).
   */
  envelope?: number;
}

/** The reply envelope of this version's coordinators, told to workers in each job (`envelope`). */
export const kReplyEnvelope = 2;

/**
 * What a worker returns, as JSON text: the reply as JSON text (as the local pool passes it
 * between threads), the digest of the request the worker ran, and its signature of both
 * (`replySigned`; absent from a worker run with `--insecure-no-secret`). Version 2 adds
 * where and how long the attempt ran (`ran`), signed with the rest; a worker sends it to a
 * coordinator whose jobs say it reads it (AttemptJobData `envelope`).
 */
export type JobReplyEnvelope =
  | { v: 1; digest: string; reply: string; sig?: string }
  | { v: 2; digest: string; reply: string; ran: RanOnWorker; sig?: string };
