import { z } from 'zod';
import { cleanText } from '../../../text/clean-text.js';
import type { AttemptReply } from '../../../executors/messages.js';
import { kMaxJsonDepth, nestsDeeperThan, tooDeepText } from '../../../text/json-depth.js';
import { describe } from '../../../executors/module.js';
import { applyReplyRules, type ReplyRules } from '../../../executors/reply-rules.js';
import { scrubSecrets } from '../../../text/secret-scrubber.js';
import { discoveryInputSchema } from '../../../schema/discovery.js';
import { kArtifactNamePattern, taskResultSchema } from '../../../schema/result.js';
import { artifactManifestsSchema, artifactValidationsSchema } from '../../../schema/artifact-manifest.js';
import type { AwaitedTask } from '../jobs/awaited-task.js';
import { openJobReply, type ExpectedReply } from './reply-envelope.js';

const kErrorClasses = ['rate-limited', 'transient', 'timeout', 'invalid-output', 'task-failure', 'worker-crash', 'io'] as const;

const usageSchema = z.object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }).strict();
/** knowledge/usage.ts RequestUsage: one model request's tokens (usage.ndjson's lines). */
const requestsSchema = z.array(
  z
    .object({
      request: z.number().int().min(1),
      kind: z.enum(['first', 'repair', 'agent']),
      model: z.string(),
      prompt_tokens: z.number().int().min(0),
      completion_tokens: z.number().int().min(0),
      cached_tokens: z.number().int().min(0),
      reported: z.boolean(),
      batch: z.boolean().optional(),
      agent_session: z.string().optional(),
      reasoning_tokens: z.number().int().min(0).optional(),
      cache_creation_tokens: z.number().int().min(0).optional(),
      prompt_chars: z.number().int().min(0).optional(),
      cost_usd: z.number().min(0).optional(),
    })
    .strict(),
);
const verdictSchema = z.enum(['pass', 'warn', 'block']);
const notesSchema = z.array(z.string());

/** The fields every reply may carry: the thread that ran it on its worker. */
const threadSchema = z.number().int().min(0).optional();

const failedSchema = z
  .object({
    kind: z.literal('error'),
    errorClass: z.enum(kErrorClasses),
    error: z.string(),
    retryAfterMs: z.number().min(0).optional(),
    usage: usageSchema.optional(),
    requests: requestsSchema.optional(),
    notes: notesSchema.optional(),
    thread: threadSchema,
  })
  .strict();

/** knowledge/discovery-files.ts DiscoveryFileInput. */
const discoveryRecordSchema = z
  .object({
    taskId: z.string(),
    role: z.string(),
    status: z.enum(['completed', 'failed', 'skipped']),
    findings: z.string(),
    error: z.string().nullable(),
    keyFindings: z.array(z.string()).optional(),
    decisions: z.array(z.string()).optional(),
    filesModified: z.array(z.string()).optional(),
    verification: z.enum(['self-validated', 'peer-reviewed', 'tested']).nullable().optional(),
    qualityScore: z.number().nullable().optional(),
    supervisionVerdict: verdictSchema.nullable().optional(),
    artifacts: z.array(z.string()),
  })
  .strict();

const finishedSchema = z
  .object({
    kind: z.literal('finished'),
    status: z.enum(['completed', 'failed']),
    findings: z.string(),
    gc_signal: z.string(),
    severity_summary: z.string(),
    error: z.string(),
    supervision_verdict: verdictSchema.nullable().optional(),
    supervision_score: z.number().min(0).max(1).nullable().optional(),
    discoveries: z.array(discoveryInputSchema),
    wisdom: taskResultSchema.shape.wisdom.unwrap(),
    artifacts: z.array(z.object({ name: z.string().regex(kArtifactNamePattern), content: z.string() }).strict()),
    discovery: discoveryRecordSchema,
    usage: usageSchema.optional(),
    requests: requestsSchema.optional(),
    notes: notesSchema.optional(),
    attemptNotes: notesSchema.optional(),
    thread: threadSchema,
    route: z.string().optional(),
    manifests: artifactManifestsSchema.optional(),
    validations: artifactValidationsSchema.optional(),
  })
  .strict();

/** Levels of a reply around a result's own (reply, discoveries, a discovery, its data). */
const kReplyLevels = 4;

/** An AttemptReply as JSON carries it. */
export const attemptReplySchema = z.discriminatedUnion('kind', [finishedSchema, failedSchema]);

/**
 * The reply of an awaited job, from its return value, in two steps: the envelope's
 * signature and digest first (reply-envelope.ts: a forged reply, or one of another
 * request, is never merged), then the reply text's schema and the rules of its task's
 * role (readJobReply). The worker's own account of where and how long it ran, signed in
 * the envelope, goes with it (`worker`); the reply text cannot carry one (its schema is strict).
 */
export function readSignedJobReply(value: unknown, expected: ExpectedReply, task: AwaitedTask): AttemptReply {
  const opened = openJobReply(value, expected);
  if (opened.kind === 'refused') return opened.reply;
  const reply = readJobReply(opened.reply, task.taskId, task.rules);
  return opened.ran === undefined ? reply : { ...reply, worker: opened.ran };
}

/**
 * A reply text from a job's return value, which a worker on another machine wrote: it is
 * not trusted to be well formed. The worker returns the reply as JSON text (see
 * bullmq-worker.ts); anything that does not parse, or does not match the schema, fails
 * the task as invalid output naming the first bad field (not retried: the same worker code
 * would send the same reply). Nor is its content trusted: a well-formed reply goes through
 * the rules of a local attempt's reply again (executors/reply-rules.ts), for task `taskId`
 * under `rules`, so that its texts are safe and within their caps whoever wrote it.
 */
export function readJobReply(value: unknown, taskId: string, rules: ReplyRules): AttemptReply {
  // A worker's own checks refuse results deeper than kMaxJsonDepth; a reply that nests deeper
  // (the reply's own few levels allowed) did not come from them, and would overflow the
  // stack of whatever walks it here (the schema, the discovery writer).
  if (typeof value === 'string' && nestsDeeperThan(value, kMaxJsonDepth + kReplyLevels)) return invalid(tooDeepText());
  let parsed: unknown;
  try {
    parsed = typeof value === 'string' ? JSON.parse(value) : value;
  } catch (error) {
    return invalid(`its JSON does not parse (${scrubSecrets(cleanText(describe(error)))})`);
  }
  const result = attemptReplySchema.safeParse(parsed);
  if (result.success) return ruled(taskId, result.data as AttemptReply, rules);
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'the reply';
  return invalid(`${where}: ${issue?.message ?? 'not a reply'}`);
}

/** The reply held to the rules of every reply; one the rules cannot handle (too big to copy) is invalid. */
function ruled(taskId: string, reply: AttemptReply, rules: ReplyRules): AttemptReply {
  try {
    return applyReplyRules(taskId, reply, rules);
  } catch (error) {
    return invalid(`it cannot be processed (${scrubSecrets(cleanText(describe(error)))})`);
  }
}

function invalid(why: string): AttemptReply {
  return { kind: 'error', errorClass: 'invalid-output', error: cleanText(`Invalid output: the reply from the worker cannot be used: ${why}`) };
}
