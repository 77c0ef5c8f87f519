import { BroadcastChannel } from 'node:worker_threads';
import type { AttemptRequest } from './messages.js';

/**
 * Many module attempts in one pool message (the local pool's batches, see
 * backend/local/module-batches.ts): one message and one clone for many short tasks.
 * What the batch has to say before it returns goes on the BroadcastChannel `channel`,
 * tagged with `batch` (BatchNews): a MessageChannel made and transferred per batch cost
 * the two threads about as much as the batch's no-op tasks themselves.
 */
export interface PoolBatch {
  requests: AttemptRequest[];
  /** The BroadcastChannel name of the pool's batches: one per pool, so no other run hears it. */
  channel: string;
  /** The batch's number on that channel. */
  batch: number;
}

/**
 * A batch's news on its channel: first `started`, when it starts (sent only when one of
 * its attempts has a timeout: its deadline counts from then), then the replies that are
 * ready while others of the batch still run.
 */
export type BatchNews = { batch: number; started: true } | { batch: number; replies: BatchReplies };

/**
 * Replies of a batch as one flat array, `[index in the batch, reply text, …]`: on its
 * channel while the batch runs, and as the pool task's return value for those ready at its end.
 * Each reply is its own JSON text, read on its own: one that does not read fails its task only.
 */
export type BatchReplies = (number | string)[];


/**
 * Posts a batch's news. The channel is opened for it and closed at once (as usage-channel.ts
 * does): a channel kept open in a worker would be sent every other worker's news and never
 * read it. Posting queues the message at the listener before close returns, so none is lost,
 * and it is queued before the batch's return value is posted.
 */
export function postBatchNews(name: string, news: BatchNews): void {
  const channel = new BroadcastChannel(name);
  try {
    channel.postMessage(news);
  } finally {
    channel.close();
  }
}
