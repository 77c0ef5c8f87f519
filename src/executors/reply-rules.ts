import { artifactLimitsOf, artifactPath, planTaskArtifacts } from '../knowledge/artifacts.js';
import { ruleContract } from '../knowledge/contracts/reply-contract.js';
import { cutText } from '../text/cut-text.js';
import type { DiscoveryFileInput } from '../knowledge/discovery-files.js';
import { roleRulesFor } from '../roles/role-rules.js';
import type { TaskResult } from '../schema/result.js';
import type { PipelineName } from '../schema/session.js';
import { kMaxTimerMs } from '../process/timer-range.js';
import { cleanText } from '../text/clean-text.js';
import type { AttemptReply, FailedAttemptReply, FinishedAttempt, TaskLimits } from './messages.js';
import { mapStrings, SecretScrubber } from '../text/secret-scrubber.js';

/** An error message longer than this keeps its beginning and its end (where stderr says what went wrong). */
export const kMaxErrorChars = 4000;
/** gc_signal and severity_summary are short labels; longer ones are cut, with a note. */
const kMaxLabelChars = 500;
/** Notes are short sentences of the engine's own; a reply holds at most this many, of at most kMaxNoteChars each. */
const kMaxNotes = 50;
const kMaxNoteChars = 1000;

/** What a task's reply is held to besides its own content. */
export interface ReplyRules {
  /** The session's pipeline, whose result rules apply (a challenger's gc_signal from its counts). */
  pipeline: PipelineName;
  /** The task's role (its row's `role`), which those rules and the discovery record name. */
  role: string;
  /** The run's output caps. */
  limits: TaskLimits;
  /**
   * The secrets to scrub, when the caller made them once for many replies (reading the
   * environment costs a coordinator's main thread a fraction of a millisecond a reply).
   * @default the environment's, read at each call (SecretScrubber.fromEnv)
   */
  secrets?: SecretScrubber;
}

/**
 * The rules every reply of an attempt of task `taskId` goes through, wherever it was made:
 * by finishAttempt from an executor's result (on a thread of this machine or of a worker),
 * and again on the coordinator for each reply a worker sent, which may come from anyone
 * who can write to Redis. The same rules in both places: a reply from a worker changes
 * nothing that a local attempt could not change.
 *
 * - Every text is made safe (ANSI escapes and control characters removed, secrets of the
 *   environment made `***`), artifact contents scrubbed only (they are files of their own).
 * - gc_signal and severity_summary are cut at 500 characters, with a note, then held to the
 *   pipeline's result rules (`derive`: a challenger's signal from its counts); a result they
 *   refuse is invalid output.
 * - Findings longer than the cell go to `artifacts/<id>/output.md` and the cell keeps their
 *   beginning and a pointer; the artifacts are fitted to the run's caps (planTaskArtifacts).
 * - Errors keep at most about 4,000 characters; notes at most 50 of 1,000; a retry delay
 *   is one a timer can wait; a discovery whose type is empty once cleaned is dropped.
 * - The discovery record is made again from the reply: only what it alone holds (key
 *   findings, decisions, files modified, verification, quality score) is taken from it.
 *
 * So every cell the reply fills holds at most 4,000 characters (a spreadsheet's cell
 * holds 32,767). The rules change nothing of a reply they made: a worker's reply, ruled
 * there, comes out of the coordinator's pass as it went in.
 *
 * @param executorNotes notes of the executor (stdout cut …) that the findings cell has not
 *   shown yet: a local attempt's. A worker's reply shows its notes in its cell already.
 */
export function applyReplyRules(
  taskId: string,
  reply: AttemptReply,
  rules: ReplyRules,
  executorNotes: readonly string[] = [],
): AttemptReply {
  const scrubber = rules.secrets ?? SecretScrubber.fromEnv();
  // Scrubbed first: cleaning could take a secret's first character with an escape before
  // it (`ESC s` is one), leaving the rest unknown to the scrubber; one that control
  // characters split is found by the scrubber itself (SecretScrubber.text).
  const clean = (text: string) => cleanText(scrubber.text(text));
  const newNotes = executorNotes.map(clean);
  const attemptNotes = boundNotes([...(reply.kind === 'finished' ? (reply.attemptNotes ?? []) : []).map(clean), ...newNotes]);
  const extras = {
    ...(reply.usage ? { usage: reply.usage } : {}),
    ...(reply.requests ? { requests: mapStrings(reply.requests, clean) } : {}),
    ...(reply.thread === undefined ? {} : { thread: reply.thread }),
  };
  if (reply.kind === 'error') {
    const notes = boundNotes([...(reply.notes ?? []).map(clean), ...newNotes]);
    return {
      kind: 'error',
      errorClass: reply.errorClass,
      error: cutError(clean(reply.error)),
      ...retryAfter(reply.retryAfterMs),
      ...extras,
      ...(notes.length > 0 ? { notes } : {}),
    };
  }
  const refused = (problem: string): FailedAttemptReply & { thread?: number } => ({
    kind: 'error',
    errorClass: 'invalid-output',
    error: cutError(clean(`Invalid result: ${problem}`)),
    ...extras,
    ...(attemptNotes.length > 0 ? { notes: attemptNotes } : {}),
  });
  const { artifacts, discovery } = reply;
  const safe = mapStrings(
    {
      findings: reply.findings,
      gc_signal: reply.gc_signal,
      severity_summary: reply.severity_summary,
      error: reply.error,
      discoveries: reply.discoveries,
      wisdom: reply.wisdom,
      keyFindings: discovery.keyFindings,
      decisions: discovery.decisions,
      filesModified: discovery.filesModified,
    },
    clean,
  );
  const cellNotes = [...newNotes];
  // A type of nothing but control characters is empty once cleaned: no discovery (the board reads none back).
  const discoveries = safe.discoveries.filter((entry) => entry.type !== '');
  if (discoveries.length < safe.discoveries.length) {
    cellNotes.push(`${safe.discoveries.length - discoveries.length} discovery(ies) dropped: their type is empty once control characters are removed`);
  }
  const label = (name: string, text: string): string => {
    if (text.length <= kMaxLabelChars) return text;
    cellNotes.push(`${name} cut: the first ${kMaxLabelChars - 1} of ${text.length} characters kept`);
    return `${cutText(text, kMaxLabelChars - 1)}…`;
  };
  const severity = label('severity_summary', safe.severity_summary);
  const signal = label('gc_signal', safe.gc_signal);
  const result: TaskResult = {
    status: reply.status,
    findings: safe.findings,
    gc_signal: signal,
    severity_summary: severity,
    error: safe.error,
    discoveries,
    wisdom: safe.wisdom,
    supervision_verdict: reply.supervision_verdict,
    supervision_score: reply.supervision_score,
  };
  const ruled = roleRulesFor(rules.pipeline).normaliseResult(rules.role, result, 'derive');
  if (!ruled.ok) return refused(ruled.problem);
  const contract = ruleContract(taskId, rules.role, { route: reply.route, manifests: reply.manifests, validations: reply.validations }, clean);
  if (!contract.ok) return refused(contract.problem);
  // A name is scrubbed too: a secret as a file name would be on every listing of the folder.
  const files = artifacts.map((file) => ({ name: scrubber.text(file.name), content: scrubber.text(file.content) }));
  const written = planTaskArtifacts(taskId, safe.findings, files, artifactLimitsOf(rules.limits), cellNotes);
  const error = cutError(safe.error);
  const record: DiscoveryFileInput = {
    taskId,
    role: rules.role,
    status: reply.status,
    findings: written.cell,
    error: error === '' ? null : error,
    keyFindings: safe.keyFindings,
    decisions: safe.decisions,
    filesModified: safe.filesModified,
    verification: discovery.verification,
    qualityScore: discovery.qualityScore,
    supervisionVerdict: reply.supervision_verdict,
    artifacts: written.files.map((file) => artifactPath(taskId, file.name)),
  };
  const notes = boundNotes([...(reply.notes ?? []).map(clean), ...written.notes]);
  const finished: FinishedAttempt & { thread?: number } = {
    kind: 'finished',
    status: reply.status,
    findings: written.cell,
    gc_signal: ruled.result.gc_signal ?? '',
    severity_summary: ruled.result.severity_summary ?? '',
    error,
    discoveries,
    wisdom: safe.wisdom,
    artifacts: written.files,
    discovery: record,
    supervision_verdict: reply.supervision_verdict,
    supervision_score: reply.supervision_score,
    ...contract.contract,
    ...extras,
    ...(notes.length > 0 ? { notes } : {}),
    ...(attemptNotes.length > 0 ? { attemptNotes } : {}),
  };
  return finished;
}

/** An error of at most about kMaxErrorChars: its beginning (what failed) and its end (why). */
export function cutError(error: string): string {
  if (error.length <= kMaxErrorChars) return error;
  const head = cutText(error, 500);
  let tail = error.slice(-(kMaxErrorChars - 600));
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
  return `${head} […${error.length - head.length - tail.length} characters cut…] ${tail}`;
}

/** At most kMaxNotes notes of at most kMaxNoteChars: the engine reports each on the terminal. */
function boundNotes(notes: string[]): string[] {
  const cut = notes.map((note) => (note.length <= kMaxNoteChars ? note : `${cutText(note, kMaxNoteChars - 1)}…`));
  if (cut.length <= kMaxNotes) return cut;
  return [...cut.slice(0, kMaxNotes - 1), `${cut.length - kMaxNotes + 1} more notes dropped`];
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
