import { BroadcastChannel } from 'node:worker_threads';
import type { RequestUsage } from '../../knowledge/usage.js';
import { kUsageChannel, type UsageMessage } from '../../executors/usage-channel.js';

/**
 * A run's ear on the usage channel (executors/usage-channel.ts): each model request's
 * tokens of this session, told by the worker thread as the server answered, go to `told`
 * at once. A run that stops then loses none, though it ends the threads of its cancelled
 * attempts before their replies. Unref'd: it never keeps a process alive.
 */
export class LiveUsage {
  readonly #channel = new BroadcastChannel(kUsageChannel);

  constructor(sessionDir: string, told: (taskId: string, attempt: number, usage: RequestUsage) => void) {
    this.#channel.onmessage = (event) => {
      const message = (event as { data: Partial<UsageMessage> | null }).data;
      // Another run of this process (the library API) hears the same channel: only this session's count.
      if (message?.session !== sessionDir || typeof message.task !== 'string' || typeof message.attempt !== 'number') return;
      if (message.usage === undefined) return;
      told(message.task, message.attempt, message.usage);
    };
    this.#channel.unref();
  }

  /**
   * Stops listening, once the run's threads have ended. A message a thread posted before it
   * ended is queued here already; one turn of the event loop delivers it before the close.
   */
  async close(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.#channel.close();
  }
}
