import type { AttemptRequest, ExecutorSpec } from '../../../executors/messages.js';
import { kOfficialBaseUrl, kWorkerExecutorTypes } from '../../../option-table.js';
import { jobSigned, replySigned, requestDigest, type Signing } from './signing.js';
import type { JobReplyEnvelope } from '../jobs/job-data.js';

/** The executors a worker may offer (`--executors`, defined in the options table): each one an executor's type. */
export const kExecutorTypes = kWorkerExecutorTypes satisfies readonly ExecutorSpec['type'][];
export type ExecutorType = (typeof kExecutorTypes)[number];

/** The model server the openai SDK talks to when none is given: the worker's own OPENAI_BASE_URL, else OpenAI's (the table's). */
export { kOfficialBaseUrl };

/** What a worker runs: the jobs signed with its secret, of the executors it offers, sending its key only where it allows. */
export interface WorkerRules {
  signing: Signing;
  /** `--executors`. @default every executor */
  executors: ReadonlySet<ExecutorType>;
  /**
   * The model servers an openai job may talk to, as `baseUrlKey` gives them (`--allow-base-url`).
   * @default the worker's own OPENAI_BASE_URL, else kOfficialBaseUrl
   */
  baseUrls: ReadonlySet<string>;
  /** The worker's own OPENAI_BASE_URL (the SDK's default when a job names none). */
  ownBaseUrl: string | undefined;
}

/** A job a worker takes: run its request, or refuse it, saying why. */
export type Admission = { kind: 'run'; request: AttemptRequest; digest: string } | { kind: 'refuse'; why: string };

/**
 * Whether a worker runs a job it took from Redis, where anyone who can write to it could
 * have put or changed it: its signature must verify over its queue, its id and the digest
 * of the request it holds (recomputed here, never taken from the job), and its executor
 * must be one the worker offers, talking to a model server the worker allows. Refused
 * jobs are never run, signed or not.
 */
export function admitJob(queue: string, jobId: string, data: unknown, rules: WorkerRules): Admission {
  const job = (data ?? {}) as { request?: unknown; sig?: unknown };
  const request = job.request as AttemptRequest | undefined;
  if (request === null || typeof request !== 'object' || typeof request.executor?.type !== 'string') {
    return { kind: 'refuse', why: 'its data holds no attempt request' };
  }
  let digest: string;
  try {
    digest = requestDigest(request);
  } catch (error) {
    return { kind: 'refuse', why: `its request cannot be read (${(error as Error).message})` };
  }
  const unsigned = rules.signing.refusal(jobSigned(queue, jobId, digest), job.sig);
  if (unsigned !== undefined) return { kind: 'refuse', why: unsigned };
  const type = request.executor.type;
  if (!rules.executors.has(type as ExecutorType)) {
    return { kind: 'refuse', why: `its executor ${String(type).slice(0, 40)} is not one this worker runs (--executors ${[...rules.executors].join(',')})` };
  }
  if (request.executor.type === 'openai') {
    // Where the openai SDK will send it: a URL given (an empty one means OpenAI's), else OPENAI_BASE_URL, else OpenAI's.
    const given = request.executor.baseUrl;
    const url = given !== undefined ? given || kOfficialBaseUrl : (rules.ownBaseUrl ?? kOfficialBaseUrl);
    const key = baseUrlKey(url);
    if (key === undefined || !rules.baseUrls.has(key)) {
      return {
        kind: 'refuse',
        why: `its model server ${String(url).slice(0, 200)} is not one this worker sends its key to (--allow-base-url; allowed: ${[...rules.baseUrls].join(', ')})`,
      };
    }
  }
  return { kind: 'run', request, digest };
}

/**
 * A model server's URL as the allow-list compares it: scheme, host, port and path, without
 * a final `/`, query or fragment (where the SDK's requests go); undefined when it is no
 * http(s) URL.
 */
export function baseUrlKey(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  // Credentials in the URL would go with every request: such a URL is not one to send a key to either.
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** The worker's return value for a job: the reply text with the digest of the request it ran, signed (job-data.ts JobReplyEnvelope). */
export function sealReply(signing: Signing, queue: string, jobId: string, digest: string, reply: string): string {
  const sig = signing.sign(replySigned(queue, jobId, digest, reply));
  const envelope: JobReplyEnvelope = sig === undefined ? { v: 1, digest, reply } : { v: 1, digest, reply, sig };
  return JSON.stringify(envelope);
}
