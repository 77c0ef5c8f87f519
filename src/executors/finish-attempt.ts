import { artifactLimitsOf, artifactPath, planTaskArtifacts } from '../knowledge/artifacts.js';
import { cutText } from '../knowledge/cut-text.js';
import type { DiscoveryFileInput } from '../knowledge/discovery-files.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import { taskResultSchema, type TaskResult } from '../schema/result.js';
import type { PipelineName } from '../schema/session.js';
import { kMaxTimerMs } from '../schema/timer-range.js';
import { cleanText } from './clean-text.js';
import { nestsDeeperThan, tooDeepText } from './json-depth.js';
import type { AttemptReply, FailedAttemptReply, TaskLimits } from './messages.js';
import { describe } from './module.js';
import { mapStrings, SecretScrubber } from './secret-scrubber.js';
import type { AttemptOutcome, TaskInput, TokenUsage } from './types.js';
import type { RequestUsage } from '../knowledge/usage.js';

/** An error message longer than this keeps its beginning and its end (where stderr says what went wrong). */
export const kMaxErrorChars = 4000;
/** gc_signal and severity_summary are short labels; longer ones are cut, with a note. */
const kMaxLabelChars = 500;

/**
 * Turns an executor's raw outcome into a reply, as data: the result is validated with zod
 * (an invalid one fails the task naming the bad field), long findings and the result's
 * artifacts are fitted to `limits` and returned as files to write, with the task's
 * discovery record. Nothing is written here: a worker runs this, and the engine writes the
 * files on its main thread (knowledge/attempt-files.ts). A challenger that gave severity
 * counts but no gc_signal gets it derived from the counts: the pipeline's result rules
 * apply, and a result they refuse is invalid.
 *
 * Every text that came from the task is made safe here, once, before it is written
 * anywhere: secrets of the environment become `***` (artifact contents included), and
 * ANSI escapes and control characters are removed (but from artifact contents, which are
 * files of their own). Caps that were hit are noted in the findings and in `notes`.
 */
export function finishAttempt(
  task: Pick<TaskInput, 'id' | 'row'>,
  outcome: AttemptOutcome,
  limits: TaskLimits = {},
  pipeline: PipelineName = 'generic',
): AttemptReply {
  const scrubber = SecretScrubber.fromEnv();
  // Cleaned first: a secret that control characters split is whole once they are gone.
  const clean = (text: string) => scrubber.text(cleanText(text));
  const notes = (outcome.notes ?? []).map(clean);
  const extras = {
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    ...(outcome.requests ? { requests: outcome.requests } : {}),
    ...(notes.length > 0 ? { notes } : {}),
  };
  if (outcome.kind === 'error') {
    return {
      kind: 'error',
      errorClass: outcome.errorClass,
      error: cutError(clean(outcome.error)),
      ...retryAfter(outcome.retryAfterMs),
      ...extras,
    };
  }
  const invalid = (detail: string): FailedAttemptReply => ({
    kind: 'error',
    errorClass: 'invalid-output',
    error: cutError(clean(`Invalid result: ${detail}`)),
    ...extras,
  });
  try {
    // Through JSON first: a module's result may hold cycles, BigInts, functions or getters
    // that throw; what is left is plain data that can be walked, cloned and written.
    let plain: unknown;
    try {
      const json = JSON.stringify(outcome.result);
      if (json !== undefined && nestsDeeperThan(json)) return invalid(tooDeepText());
      plain = json === undefined ? outcome.result : JSON.parse(json);
    } catch (error) {
      return invalid(`not JSON data (${describe(error).replace(/\s+/g, ' ')})`);
    }
    const parsed = taskResultSchema.safeParse(scrubber.deep(plain));
    if (!parsed.success) {
      return invalid(
        parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'result'}: ${issue.message}`).join('; '),
      );
    }
    let result: TaskResult;
    try {
      result = cleanResult(parsed.data);
    } catch (error) {
      // A result too deep or too big to handle is the task's fault, not the worker's.
      return invalid(`cannot be processed (${describe(error).replace(/\s+/g, ' ')})`);
    }
    return finishResult(task, result, limits, notes, extras, pipeline);
  } catch (error) {
    return invalid(`cannot be processed (${describe(error).replace(/\s+/g, ' ')})`);
  }
}

function finishResult(
  task: Pick<TaskInput, 'id' | 'row'>,
  result: TaskResult,
  limits: TaskLimits,
  executorNotes: string[],
  extras: { usage?: TokenUsage; requests?: RequestUsage[]; notes?: string[] },
  pipeline: PipelineName,
): AttemptReply {
  if (result.id !== undefined && result.id !== task.id) {
    return { kind: 'error', errorClass: 'invalid-output', error: `Invalid result: id is ${cutText(result.id, 100)}, expected ${task.id}`, ...extras };
  }
  const notes = [...executorNotes];
  const label = (name: string, text: string | undefined): string => {
    if (text === undefined || text.length <= kMaxLabelChars) return text ?? '';
    notes.push(`${name} cut: the first ${kMaxLabelChars - 1} of ${text.length} characters kept`);
    return `${cutText(text, kMaxLabelChars - 1)}…`;
  };
  const severity = label('severity_summary', result.severity_summary);
  const signal = label('gc_signal', result.gc_signal);
  const ruled = pipelineFor(pipeline).normaliseResult(task.row.role ?? '', { ...result, gc_signal: signal, severity_summary: severity }, 'derive');
  if (!ruled.ok) return { kind: 'error', errorClass: 'invalid-output', error: cutError(`Invalid result: ${ruled.problem}`), ...extras };
  const written = planTaskArtifacts(task.id, result.findings, result.artifacts ?? [], artifactLimitsOf(limits), notes);
  const error = cutError(result.error ?? (result.status === 'failed' ? 'The task reported failure' : ''));
  const artifacts = written.files.map((file) => artifactPath(task.id, file.name));
  const discovery: DiscoveryFileInput = {
    taskId: task.id,
    role: task.row.role ?? '',
    status: result.status,
    findings: written.cell,
    error: error === '' ? null : error,
    keyFindings: result.key_findings,
    decisions: result.decisions,
    filesModified: result.files_modified,
    verification: result.verification,
    qualityScore: result.quality_score,
    supervisionVerdict: result.supervision_verdict,
    artifacts,
  };
  return {
    kind: 'finished',
    status: result.status,
    findings: written.cell,
    gc_signal: ruled.result.gc_signal ?? '',
    severity_summary: ruled.result.severity_summary ?? '',
    error,
    discoveries: result.discoveries ?? [],
    wisdom: result.wisdom ?? {},
    artifacts: written.files,
    discovery,
    supervision_verdict: result.supervision_verdict,
    supervision_score: result.supervision_score,
    ...(extras.usage ? { usage: extras.usage } : {}),
    ...(extras.requests ? { requests: extras.requests } : {}),
    ...(written.notes.length > 0 ? { notes: written.notes } : {}),
    ...(extras.notes ? { attemptNotes: extras.notes } : {}),
  };
}

/** The result with ANSI escapes and control characters removed from every text but artifact contents. */
function cleanResult(result: TaskResult): TaskResult {
  const { artifacts, ...rest } = result;
  const cleaned = mapStrings(rest, cleanText);
  return artifacts === undefined ? cleaned : { ...cleaned, artifacts };
}

/** An error of at most about kMaxErrorChars: its beginning (what failed) and its end (why). */
export function cutError(error: string): string {
  if (error.length <= kMaxErrorChars) return error;
  const head = cutText(error, 500);
  let tail = error.slice(-(kMaxErrorChars - 600));
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
  return `${head} […${error.length - head.length - tail.length} characters cut…] ${tail}`;
}

/**
 * A retry delay a module or a server asked for, as a timer can wait it: a negative or
 * non-number one is dropped (the engine's backoff applies), and one past the timers'
 * ceiling waits the ceiling instead of firing at once.
 */
function retryAfter(ms: number | undefined): { retryAfterMs?: number } {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return {};
  return { retryAfterMs: Math.min(Math.round(ms), kMaxTimerMs) };
}
