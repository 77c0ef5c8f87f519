import { BullmqBackend } from './bullmq-backend.js';
import { queueNameOf } from './names.js';
import { maskRedisUrl } from './redis-url.js';
import { sessionIdOf } from './session-id.js';

/**
 * The backend of a coordinator (`run --backend bullmq`): the session's id (made on its
 * first such run), the connection to Redis, and a line telling how to start workers.
 */
export async function openCoordinator(
  sessionDir: string,
  url: string,
  tell: (line: string) => void,
  redis: { redisTimeoutSeconds: number | undefined; lost: (reason: string) => void },
): Promise<BullmqBackend> {
  const sessionId = sessionIdOf(sessionDir);
  const timeout = redis.redisTimeoutSeconds === undefined ? {} : { redisTimeoutMs: redis.redisTimeoutSeconds * 1000 };
  const backend = await BullmqBackend.open({ url, sessionId, warn: tell, lost: redis.lost, ...timeout });
  tell(
    `bullmq: tasks go to queue ${queueNameOf(sessionId)} on ${maskRedisUrl(url)}; ` +
      `start workers with: csv-wave worker --redis URL --session-id ${sessionId}`,
  );
  return backend;
}
