import type { MessagePort } from 'node:worker_threads';
import type { AttemptRequest } from './messages.js';

/**
 * Many module attempts in one pool message (the local pool's batches, see
 * backend/local/module-batches.ts): one message and one clone for many short tasks.
 * `port` carries first `kBatchStarted`, when the batch starts (a module's deadline counts
 * from then), then the replies that are ready while others of the batch still run.
 */
export interface PoolBatch {
  requests: AttemptRequest[];
  port: MessagePort;
}

/**
 * Replies of a batch as one flat array, `[index in the batch, reply text, …]`: on its
 * port while the batch runs, and as the pool task's return value for those ready at its end.
 * Each reply is its own JSON text, read on its own: one that does not read fails its task only.
 */
export type BatchReplies = (number | string)[];

/** What a batch's port says first: its attempts have started (sent only when one has a timeout). */
export const kBatchStarted = 0;
