import { isFolderWriteFailure } from '../../files/write-all.js';
import type { SessionFileWriter } from '../../layout.js';
import { cleanText } from '../../text/clean-text.js';
import { cutError } from '../../executors/reply-rules.js';
import type { AttemptPlace, AttemptReply, ArtifactFile, TaskLimits, WorkerReply } from '../../executors/messages.js';
import { describe } from '../../executors/module.js';
import { scrubSecrets } from '../../text/secret-scrubber.js';
import { kArtifactNamePattern } from '../../schema/result.js';
import { artifactLimitsOf, maxPlannedBytes, writeArtifactFiles } from '../../knowledge/artifacts.js';
import { removeDiscoveryFile, wantsDiscoveryFile, writeDiscoveryFile, type DiscoveryFilePolicy } from '../../knowledge/discovery-files.js';
import type { KnownFiles } from '../../knowledge/known-files.js';
import { sessionPathForRead } from '../../files/session-path.js';

/**
 * Writes the files a finished attempt produced into the session folder — its artifacts,
 * then its discovery file when `policy` asks for it (else the file an earlier attempt left,
 * a failure's, is removed: its dependents would read it as this one's) — and returns the reply the scheduler
 * takes, with the artifacts' paths. Runs on the engine's main thread, before the reply
 * reaches the scheduler: the findings cell the scheduler records points at those files.
 *
 * A full disk or a read-only folder is no fault of the task: the reply becomes class `io`
 * (the run stops, the task stays pending for `resume`). Anything else (a symlink out of
 * the session) fails the task saying so, and the run goes on. Either way the reply keeps
 * only the notes of the attempt itself, not those of the files it could not write.
 *
 * The reply came from a worker, maybe on another machine: the paths are made here from
 * the task id and names checked again, never taken from the reply, and the files are
 * checked against the run's `limits` as the worker should have fitted them (see
 * replyProblem). A reply that fails a check is refused as `invalid-output`, writing nothing.
 */
export function writeAttemptFiles(
  files: SessionFileWriter,
  taskId: string,
  reply: AttemptReply,
  policy: DiscoveryFilePolicy,
  limits: TaskLimits,
  known?: KnownFiles,
): WorkerReply {
  if (reply.kind === 'error') return reply;
  const { artifacts: planned, discovery, attemptNotes, ...rest } = reply;
  const problem = replyProblem(taskId, planned, discovery.taskId, limits) ?? manifestPathsProblem(files.dir, reply.manifests ?? []);
  if (problem !== undefined) {
    const error = scrubSecrets(cleanText(`Invalid output: the reply holds ${problem}`));
    return { kind: 'error', errorClass: 'invalid-output', error, ...placeOf(rest) };
  }
  try {
    const artifacts = writeArtifactFiles(files, taskId, planned);
    const record = { ...discovery, artifacts };
    if (wantsDiscoveryFile(policy, record)) {
      writeDiscoveryFile(files, record);
      known?.discoveryWritten(taskId);
    } else if (known?.mayHaveDiscovery(taskId) === true) {
      // An earlier attempt's record (a failure's) is never left for dependents to read as this one's.
      removeDiscoveryFile(files, taskId);
      known.discoveryRemoved(taskId);
    }
    return { ...rest, artifacts };
  } catch (error) {
    const errorClass = isFolderWriteFailure(error) ? 'io' : 'task-failure';
    return {
      kind: 'error',
      errorClass,
      error: cutError(scrubSecrets(cleanText(describe(error)))),
      ...(rest.usage ? { usage: rest.usage } : {}),
      ...(attemptNotes ? { notes: attemptNotes } : {}),
      ...placeOf(rest),
    };
  }
}

/** Where the attempt ran (its thread, its worker), kept by a reply its files turned into an error. */
function placeOf({ thread, worker }: AttemptPlace): AttemptPlace {
  return { ...(thread === undefined ? {} : { thread }), ...(worker === undefined ? {} : { worker }) };
}

/**
 * What makes a reply's files unfit to write, or undefined: a file that is not a name and
 * a text, a name that is not one, a discovery record of another task, more files or bytes
 * than planTaskArtifacts gives a task under `limits`, or two files of one name (in any
 * case: some file systems do not tell `Notes` from `notes`, and a second `output` would
 * replace the findings' file).
 */
function replyProblem(taskId: string, files: readonly ArtifactFile[], discoveryOf: string, limits: TaskLimits): string | undefined {
  // Typed, but read from JSON that only had its `kind` checked (readReply): the shape first.
  if (!Array.isArray(files)) return 'artifacts that are not a list';
  const notFile = files.findIndex((file: unknown) => {
    const { name, content } = (file ?? {}) as { name?: unknown; content?: unknown };
    return typeof name !== 'string' || typeof content !== 'string';
  });
  if (notFile >= 0) return `artifact ${notFile + 1} without a text name and content`;
  const badName = files.find((file) => !kArtifactNamePattern.test(file.name));
  if (badName !== undefined) return `an artifact named ${JSON.stringify(badName.name)}`;
  if (discoveryOf !== taskId) return `a discovery record of ${JSON.stringify(discoveryOf)}`;
  const caps = artifactLimitsOf(limits);
  if (files.length > caps.maxFiles) {
    return `${files.length} artifact files, past the cap of ${caps.maxFiles} per task (max_artifacts_per_task)`;
  }
  const bytes = files.reduce((total, file) => total + Buffer.byteLength(file.content), 0);
  if (bytes > maxPlannedBytes(caps)) {
    return `${bytes} bytes of artifact files, past the cap of ${caps.maxBytes} per task (max_artifact_bytes)`;
  }
  const seen = new Map<string, string>();
  for (const file of files) {
    const first = seen.get(file.name.toLowerCase());
    if (first !== undefined) return `two artifacts of one name: ${JSON.stringify(first)} and ${JSON.stringify(file.name)}`;
    seen.set(file.name.toLowerCase(), file.name);
  }
  return undefined;
}

/**
 * A manifest whose path leads out of the session folder through a symlink on the way (its
 * text was checked where the result entered: schema/artifact-manifest.ts), or undefined.
 * A path that names no file yet is no problem here: a reader is told it is missing.
 */
function manifestPathsProblem(sessionDir: string, manifests: readonly { artifact_id: string; path: string }[]): string | undefined {
  for (const [index, manifest] of manifests.entries()) {
    try {
      sessionPathForRead(sessionDir, manifest.path);
    } catch (error) {
      return `a manifest (artifact_manifests.${index}, ${manifest.artifact_id}) whose path leads out of the session folder: ${(error as Error).message}`;
    }
  }
  return undefined;
}
