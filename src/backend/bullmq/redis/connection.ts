import { Redis } from 'ioredis';
import { WaveError } from '../../../errors.js';
import { maskRedisUrl } from './redis-url.js';

/** How long the first contact with Redis may take before the coordinator or worker gives up. */
const kConnectTimeoutMs = 5000;

/**
 * The connection options BullMQ gets: the URL, and no cap on a command's retries, which
 * BullMQ requires of the connections its workers block on (a lost Redis is waited for).
 */
export function bullmqConnection(url: string): { url: string; maxRetriesPerRequest: null } {
  return { url, maxRetriesPerRequest: null };
}

/**
 * Checks that Redis answers at `url` before anything is added or taken: a run or a
 * worker pointed at a Redis that is not there fails at once (exit 2), saying where it
 * looked (password masked) and what to do, instead of waiting on reconnects.
 */
export async function checkRedisReachable(url: string): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: kConnectTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The socket's own error (ECONNREFUSED …) says more than the rejection ("Connection is
  // closed"); and without a listener Node would print it.
  let socketError: Error | undefined;
  client.on('error', (error: Error) => {
    socketError ??= error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new WaveError(
      'REDIS_UNREACHABLE',
      `Redis at ${maskRedisUrl(url)} cannot be reached (${(socketError ?? (error as Error)).message}): start it (e.g. \`redis-server\`), ` +
        'or pass the URL of a running one with --redis URL or CSV_WAVE_REDIS_URL',
      { cause: error },
    );
  } finally {
    client.disconnect();
  }
}
