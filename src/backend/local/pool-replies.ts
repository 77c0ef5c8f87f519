import { cleanText } from '../../text/clean-text.js';
import type { AttemptReply, AttemptRequest } from '../../executors/messages.js';
import { describe } from '../../executors/module.js';
import { scrubSecrets } from '../../text/secret-scrubber.js';

/**
 * A reply read back from its JSON text. Any reply that cannot be read fails its task
 * (instead of leaving it running for ever); it is not retried, as the same output would
 * give the same reply.
 */
export function readReply(text: unknown): AttemptReply {
  let reply: unknown;
  let why = '';
  try {
    reply = JSON.parse(String(text));
  } catch (error) {
    // V8 quotes the text around the error: scrubbed like every other text of a task.
    why = ` (${scrubSecrets(cleanText(describe(error)))})`;
  }
  const kind = (reply as { kind?: unknown } | null | undefined)?.kind;
  if (kind === 'finished' || kind === 'error') return reply as AttemptReply;
  return { kind: 'error', errorClass: 'invalid-output', error: `Invalid output: the task's reply from its worker thread could not be read${why}` };
}

/** The reply of a module task whose thread the pool ended at its timeout + grace. */
export function backstopReply(request: AttemptRequest, tasksPerThread: number): AttemptReply {
  const seconds = request.timeoutMs / 1000;
  // Tasks that shared the thread and had started too pass their deadline together
  // with the one that spins. A retry on a thread of its own tells which one it was.
  if (!request.isolated && tasksPerThread > 1) {
    return {
      kind: 'error',
      errorClass: 'worker-crash',
      error: `Timed out after ${seconds}s; its worker thread, shared with other tasks, was ended`,
    };
  }
  return { kind: 'error', errorClass: 'timeout', error: `Timed out after ${seconds}s; its worker thread was ended` };
}

/** The reply of a task whose worker thread died before it replied. */
export function crashReply(error: unknown): AttemptReply {
  // What a dying thread said is the task's text too: scrubbed like every other error.
  return { kind: 'error', errorClass: 'worker-crash', error: scrubSecrets(cleanText(`Worker thread died: ${describe(error)}`)) };
}
