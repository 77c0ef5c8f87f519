/**
 * The worker entry: runs one attempt of a task with its executor and checks its result,
 * off the main thread (an agent attempt on it: backend/local/local-backend.ts). Everything comes in the request and goes back in the reply: the
 * worker neither reads nor writes the session folder (a command task runs in it, though).
 */
import { threadId, type MessagePort } from 'node:worker_threads';
import { cleanText } from '../text/clean-text.js';
import { createExecutor } from './create-executor.js';
import { finishAttempt } from './finish-attempt.js';
import { postBatchNews, type BatchReplies, type PoolBatch } from './pool-batch.js';
import { workerErrorReply } from './worker-error.js';
import type { AttemptReply, AttemptRequest, ExecutorSpec } from './messages.js';
import { describe } from './module.js';
import { scrubSecrets } from '../text/secret-scrubber.js';
import { postUsage } from './usage-channel.js';
import type { AttemptOutcome, Executor } from './types.js';
import { openWorkplace, type Workplace } from './workdir/index.js';

/** Aborting is the pool's job (it ends the thread); inside, nothing aborts an executor. */
const kNeverAborted: AbortSignal = new AbortController().signal;

/** One executor per spec per thread, so that a module is imported once. */
const executors = new Map<string, Promise<Executor>>();

function executorFor(spec: ExecutorSpec): Promise<Executor> {
  // A module's spec is its path: no JSON text per task for the most frequent, shortest tasks.
  const key = spec.type === 'module' ? `module:${spec.path}` : JSON.stringify(spec);
  let executor = executors.get(key);
  if (!executor) {
    executor = createExecutor(spec);
    executors.set(key, executor);
  }
  return executor;
}

/**
 * What the pool calls: the attempt's reply as JSON text. A reply that crosses the thread
 * boundary as an object is structured-cloned, and one the main thread cannot rebuild (too
 * deep for its stack) is dropped by piscina without a word: its task would wait forever.
 * Text always arrives; reading it is the pool's job (`readReply`), and a reply that does
 * not read fails its task there. An attempt that throws becomes an error reply here, for
 * the same reason (a thrown value is cloned too).
 */
export async function replyText(request: PoolRequest): Promise<string> {
  let reply: AttemptReply;
  try {
    reply = await runAttempt(request);
  } catch (error) {
    reply = workerErrorReply(error);
  }
  try {
    return JSON.stringify(reply);
  } catch (error) {
    const why = scrubSecrets(cleanText(describe(error)));
    return JSON.stringify({ kind: 'error', errorClass: 'invalid-output', error: `Invalid output: the reply cannot be sent (${why})` });
  }
}

/**
 * Runs a batch's attempts at once and answers each as it ends. The replies that end in
 * the same turn of this thread's event loop go together, at its end (setImmediate): a long
 * attempt holds no short one back, and many short ones cost one message. Those ready when
 * the last ends are the return value, so a batch of short attempts posts nothing on its channel.
 */
export async function replyBatch({ requests, channel, batch }: PoolBatch): Promise<BatchReplies> {
  if (requests.length === 0) return [];
  if (requests.some((request) => request.timeoutMs > 0)) postBatchNews(channel, { batch, started: true });
  let ready: BatchReplies = [];
  let left = requests.length;
  let flushing = false;
  const flush = () => {
    flushing = false;
    if (left === 0 || ready.length === 0) return;
    postBatchNews(channel, { batch, replies: ready });
    ready = [];
  };
  await new Promise<void>((allDone) => {
    requests.forEach((request, index) => {
      void replyText(request).then((text) => {
        ready.push(index, text);
        if (--left === 0) allDone();
        else if (!flushing) {
          flushing = true;
          setImmediate(flush);
        }
      });
    });
  });
  const last = ready;
  ready = [];
  return last;
}

/**
 * The request as the local pool sends it: `started` is told when the worker takes the task
 * up, so that the pool's deadline for a module task does not count the time it sat in a
 * queue. A MessagePort, transferred, not cloned: a detail of the local backend.
 */
export type PoolRequest = AttemptRequest & { started?: MessagePort };

export default async function runAttempt(request: PoolRequest): Promise<AttemptReply> {
  request.started?.postMessage('started');
  request.started?.close();
  const task = request.task;
  const limits = request.limits ?? {};
  let workplace: Workplace | undefined;
  if (request.workdir !== undefined) {
    try {
      workplace = await openWorkplace(request.workdir, task);
    } catch (error) {
      const outcome: AttemptOutcome = { kind: 'error', errorClass: 'task-failure', error: `Cannot make the working folder of ${task.id}: ${describe(error)}` };
      return { ...finishAttempt(task, outcome, limits, request.pipeline), thread: threadId };
    }
  }
  let outcome = await (await executorFor(request.executor)).run(task, {
    signal: kNeverAborted,
    timeoutMs: request.timeoutMs,
    ...(limits.maxStdoutBytes === undefined ? {} : { maxStdoutBytes: limits.maxStdoutBytes }),
    ...(request.prompt === undefined ? {} : { prompt: request.prompt }),
    ...(request.maxBudgetUsd === undefined ? {} : { maxBudgetUsd: request.maxBudgetUsd }),
    // Each answer's tokens reach the engine at once: a run that stops ends this thread, and the reply with it.
    reportUsage: (usage) => postUsage({ session: task.session, task: task.id, attempt: task.attempt, usage }),
    ...(workplace === undefined ? {} : { workdir: workplace.dir }),
  });
  if (workplace !== undefined) outcome = await putAway(workplace, outcome, task.id);
  return { ...withInputNotes(finishAttempt(task, outcome, limits, request.pipeline), task.prev_context), thread: threadId };
}

/** The outcome once the workplace recorded what it holds (a worktree's changes) and was put away; its notes added. */
async function putAway(workplace: Workplace, outcome: AttemptOutcome, id: string): Promise<AttemptOutcome> {
  let finished: AttemptOutcome;
  try {
    finished = await workplace.finish(outcome);
  } catch (error) {
    finished = { ...outcome, kind: 'error', errorClass: 'task-failure', error: `Cannot record what ${id} changed in ${workplace.dir}: ${describe(error)}` };
  }
  return workplace.notes.length === 0 ? finished : { ...finished, notes: [...workplace.notes, ...(finished.notes ?? [])] };
}

/** prev_context of a task cut at its cap (the marker of graph/prev-context.ts). */
const kPrevContextCut = /\n\[prev_context cut: (\d+) of (\d+) characters kept\]$/;

/**
 * The reply with a note for each cap the task's input hit: a prev_context cut at
 * `prevContextCap` is reported like the caps on its output (not in its findings, though:
 * the task did nothing wrong). A note of the attempt, kept if its files cannot be written.
 */
export function withInputNotes(reply: AttemptReply, prevContext: string): AttemptReply {
  const cut = kPrevContextCut.exec(prevContext);
  if (!cut) return reply;
  const note = `prev_context cut: ${cut[1]} of ${cut[2]} characters kept (prev_context_cap)`;
  if (reply.kind === 'error') return { ...reply, notes: [...(reply.notes ?? []), note] };
  return { ...reply, notes: [...(reply.notes ?? []), note], attemptNotes: [...(reply.attemptNotes ?? []), note] };
}
