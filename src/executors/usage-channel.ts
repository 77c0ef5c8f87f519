/**
 * The tokens of each model request, sent from the worker thread that made it to the
 * engine as soon as the server answered. A run that stops ends its worker threads with
 * their attempts (the only way to abort a model call inside a thread), and the reply of
 * such an attempt never comes: without this message its answered requests would go
 * uncounted. A BroadcastChannel reaches every thread of the process with no set-up per
 * thread or request; a worker of another process (a queue's) has no listener, and the
 * reply's `requests` still carry every request.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type { RequestUsage } from '../knowledge/usage.js';

/** The channel's name: one per process, shared by every run in it (a message names its session). */
export const kUsageChannel = 'csv-wave:request-usage';

/** One request's tokens, and whose they are. */
export interface UsageMessage {
  /** The session folder as the task input names it (TaskInput.session). */
  session: string;
  task: string;
  attempt: number;
  usage: RequestUsage;
}

/**
 * Posts one message. The channel is opened for it and closed at once: a channel kept
 * open in a worker would be sent every other worker's messages and never read them.
 * Posting queues the message at the listeners before close returns, so none is lost.
 */
export function postUsage(message: UsageMessage): void {
  const channel = new BroadcastChannel(kUsageChannel);
  try {
    channel.postMessage(message);
  } finally {
    channel.close();
  }
}
