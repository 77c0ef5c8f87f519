import { WaveError } from '../errors.js';
import type { SessionConfig } from '../schema/session.js';
import { parseRate, type RateLimit } from './bullmq/rate.js';
import { redisUrlFrom } from './bullmq/redis-url.js';

/**
 * Where a run's attempts run (`--backend`).
 * - `local`: this machine's worker threads and processes (backend/local/).
 * - `bullmq`: BullMQ jobs on the Redis at `url`, run by `csv-wave worker` processes on any machine (backend/bullmq/).
 */
export type BackendChoice = { type: 'local' } | { type: 'bullmq'; url: string; rate?: RateLimit };

/** session.json's `backend`, for a run whose flags name none: bullmq needs a URL there or in CSV_WAVE_REDIS_URL. */
export function backendFromConfig(config: SessionConfig['backend']): BackendChoice {
  if (config === undefined || config.type === 'local') return { type: 'local' };
  let url: string | undefined;
  try {
    url = config.url === undefined ? redisUrlFrom(undefined) : redisUrlFrom(config.url);
  } catch (error) {
    throw new WaveError('INVALID_SESSION', `session.json: backend.url: ${(error as Error).message}`, { cause: error });
  }
  if (url === undefined) {
    throw new WaveError('INVALID_SESSION', 'session.json: backend bullmq needs "url" (a Redis URL), or CSV_WAVE_REDIS_URL in the environment');
  }
  return { type: 'bullmq', url };
}

/** session.json's `backend.rate`, for a bullmq run whose flags set no `--rate`. */
export function configuredRate(config: SessionConfig['backend']): RateLimit | undefined {
  if (config?.rate === undefined) return undefined;
  try {
    return parseRate(config.rate, 'rate');
  } catch (error) {
    throw new WaveError('INVALID_SESSION', `session.json: backend.rate: ${(error as Error).message}`, { cause: error });
  }
}
