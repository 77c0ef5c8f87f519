import { isFolderWriteFailure } from '../csv/write-all.js';
import { cleanText } from '../executors/clean-text.js';
import { cutError } from '../executors/finish-attempt.js';
import type { AttemptReply, WorkerReply } from '../executors/messages.js';
import { describe } from '../executors/module.js';
import { scrubSecrets } from '../executors/secret-scrubber.js';
import { kArtifactNamePattern } from '../schema/result.js';
import { writeArtifactFiles } from './artifacts.js';
import { wantsDiscoveryFile, writeDiscoveryFile, type DiscoveryFilePolicy } from './discovery-files.js';

/**
 * Writes the files a finished attempt produced into the session folder — its artifacts,
 * then its discovery file when `policy` asks for it — and returns the reply the scheduler
 * takes, with the artifacts' paths. Runs on the engine's main thread, before the reply
 * reaches the scheduler: the findings cell the scheduler records points at those files.
 *
 * A full disk or a read-only folder is no fault of the task: the reply becomes class `io`
 * (the run stops, the task stays pending for `resume`). Anything else (a symlink out of
 * the session) fails the task saying so, and the run goes on. Either way the reply keeps
 * only the notes of the attempt itself, not those of the files it could not write.
 *
 * The reply came from a worker, maybe on another machine: the paths are made here from
 * the task id and names checked again, never taken from the reply.
 */
export function writeAttemptFiles(sessionDir: string, taskId: string, reply: AttemptReply, policy: DiscoveryFilePolicy): WorkerReply {
  if (reply.kind === 'error') return reply;
  const { artifacts: files, discovery, attemptNotes, ...rest } = reply;
  const badName = files.find((file) => !kArtifactNamePattern.test(file.name));
  if (badName !== undefined || discovery.taskId !== taskId) {
    const what = badName === undefined ? `a discovery record of ${JSON.stringify(discovery.taskId)}` : `an artifact named ${JSON.stringify(badName.name)}`;
    const error = scrubSecrets(cleanText(`Invalid output: the reply holds ${what}`));
    return { kind: 'error', errorClass: 'invalid-output', error, ...(rest.thread === undefined ? {} : { thread: rest.thread }) };
  }
  try {
    const artifacts = writeArtifactFiles(sessionDir, taskId, files);
    const record = { ...discovery, artifacts };
    if (wantsDiscoveryFile(policy, record)) writeDiscoveryFile(sessionDir, record);
    return { ...rest, artifacts };
  } catch (error) {
    const errorClass = isFolderWriteFailure(error) ? 'io' : 'task-failure';
    return {
      kind: 'error',
      errorClass,
      error: cutError(scrubSecrets(cleanText(describe(error)))),
      ...(rest.usage ? { usage: rest.usage } : {}),
      ...(attemptNotes ? { notes: attemptNotes } : {}),
      ...(rest.thread === undefined ? {} : { thread: rest.thread }),
    };
  }
}
