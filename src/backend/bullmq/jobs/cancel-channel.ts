import { Redis } from 'ioredis';
import { queueNameOf } from './names.js';

/**
 * How a coordinator stopped by Ctrl-C tells the workers to end the session's running jobs:
 * a Redis pub/sub message on the session's channel. Pub/sub keeps nothing: a worker away
 * from Redis at that moment misses it, runs its job to the end, and the reply waits in Redis
 * (a day) for a resume to merge it, as before.
 */
export function cancelChannelOf(sessionId: string): string {
  return `${queueNameOf(sessionId)}:cancel`;
}

/** Every session's channel, for a worker that serves several. */
const kCancelPattern = `${queueNameOf('*')}:cancel`;

/** How long telling the workers may wait for Redis: a Ctrl-C must not hang on a Redis that is gone. */
const kPublishTimeoutMs = 5000;

/** Tells the workers to end the running jobs of the session; false when Redis could not be reached. */
export async function publishCancel(url: string, sessionId: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: kPublishTimeoutMs,
    commandTimeout: kPublishTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.publish(cancelChannelOf(sessionId), 'cancel');
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A worker's subscription to the cancel channels: `onCancel` gets the session whose jobs to end. */
export class CancelListener {
  readonly #client: Redis;

  private constructor(client: Redis) {
    this.#client = client;
  }

  /** Subscribes to every session's channel (ioredis subscribes again after a reconnect). */
  static async start(url: string, onCancel: (sessionId: string) => void): Promise<CancelListener> {
    const client = new Redis(url, { maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    const prefix = queueNameOf('');
    client.on('pmessage', (_pattern: string, channel: string) => {
      if (channel.startsWith(prefix) && channel.endsWith(':cancel')) onCancel(channel.slice(prefix.length, -':cancel'.length));
    });
    await client.psubscribe(kCancelPattern);
    return new CancelListener(client);
  }

  /** Drops the connection without waiting for Redis (it may be gone). */
  stop(): void {
    this.#client.disconnect();
  }
}
