import type { AttemptRequest } from '../../../executors/messages.js';

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
}

/**
 * What a worker returns, as JSON text: the reply as JSON text (as the local pool passes it
 * between threads), the digest of the request the worker ran, and its signature of both
 * (`replySigned`; absent from a worker run with `--insecure-no-secret`).
 */
export interface JobReplyEnvelope {
  v: 1;
  digest: string;
  reply: string;
  sig?: string;
}
