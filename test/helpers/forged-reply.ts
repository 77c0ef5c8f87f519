import { failureText } from '../../src/executors/finish-attempt.js';
import { Worker } from 'bullmq';
import { sealReply } from '../../src/backend/bullmq/trust/job-admission.js';
import { queueNameOf } from '../../src/backend/bullmq/jobs/names.js';
import type { AttemptJobData } from '../../src/backend/bullmq/jobs/job-data.js';
import { Signing } from '../../src/backend/bullmq/trust/signing.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import type { TaskResultInput } from '../../src/schema/result.js';
import type { FinishedAttemptReply } from './attempt-reply.js';

/** OSC window title, clear screen and scrollback, cursor home, a backspace, a NUL, a bell. */
export const kEscapes = '\x1b]0;owned\x07\x1b[2J\x1b[3J\x1b[H\b\0\x07';
/** Control characters and escapes other than newline and tab: none may be left in a text the reply rules made. */
export const kControl = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** `length` characters of text full of terminal escapes, with `secret` in each 64 or so. */
export function hostileText(length: number, secret: string): string {
  const unit = `findings ${kEscapes} ${secret} `;
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/** A worker of no csv-wave code, answering a session's jobs with what a test forged. */
export interface ForgedReplies {
  /** The ids of the tasks whose jobs it answered, in order. */
  answered: string[];
  /** Stops taking jobs (its connections closed). */
  stop(): Promise<void>;
}

/**
 * Completes the jobs of session `sessionId` as a hostile worker, or anyone who can write to
 * Redis, would: a plain BullMQ worker takes each job and completes it with the return value
 * `answer` gives for its request (its reply's JSON), sealed as csv-wave's worker seals it:
 * the digest of the job's request, signed with `secret` (a worker machine that holds the
 * secret is not trusted with what it replies either), so that BullMQ stores it in the job
 * and on the event stream as it stores a real worker's. One job at a time, in the queue's
 * order. The one place the tests forge a reply.
 */
export async function forgeReplies(
  url: string,
  sessionId: string,
  answer: (request: AttemptRequest) => string | Promise<string>,
  secret: string,
): Promise<ForgedReplies> {
  const signing = Signing.withSecret(secret);
  const answered: string[] = [];
  const worker = new Worker<AttemptJobData, string>(
    queueNameOf(sessionId),
    async (job) => {
      const text = await answer(job.data.request);
      answered.push(job.data.request.task.id);
      return sealReply(signing, job.queueName, job.id!, job.data.digest, text);
    },
    { connection: { url, maxRetriesPerRequest: null }, concurrency: 1 },
  );
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  return { answered, stop: () => worker.close() };
}

/**
 * The reply a worker that skips every rule would send for a raw result: its fields copied
 * into a reply as they are (findings uncut, texts uncleaned, artifacts unfitted), the
 * discovery record made from them.
 */
export function unruledReply(taskId: string, role: string, result: TaskResultInput): FinishedAttemptReply {
  const status = result.status ?? 'completed';
  const findings = result.findings ?? '';
  const error = status === 'failed' ? failureText(result.error, findings) : (result.error ?? '');
  return {
    kind: 'finished',
    status,
    findings,
    gc_signal: result.gc_signal ?? '',
    severity_summary: result.severity_summary ?? '',
    error,
    discoveries: result.discoveries ?? [],
    wisdom: result.wisdom ?? {},
    artifacts: result.artifacts ?? [],
    discovery: {
      taskId,
      role,
      status,
      findings,
      error: error === '' ? null : error,
      ...(result.key_findings ? { keyFindings: result.key_findings } : {}),
      ...(result.decisions ? { decisions: result.decisions } : {}),
      ...(result.files_modified ? { filesModified: result.files_modified } : {}),
      ...(result.verification ? { verification: result.verification } : {}),
      ...(result.quality_score === undefined ? {} : { qualityScore: result.quality_score }),
      ...(result.supervision_verdict === undefined ? {} : { supervisionVerdict: result.supervision_verdict }),
      artifacts: (result.artifacts ?? []).map((file) => `artifacts/${taskId}/${file.name}.md`),
    },
    supervision_verdict: result.supervision_verdict,
    supervision_score: result.supervision_score,
  };
}
