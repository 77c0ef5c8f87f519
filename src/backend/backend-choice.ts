import { WaveError } from '../errors.js';
import type { SessionConfig } from '../schema/session.js';
import { parseRate, type RateLimit } from '../option-table.js';
import { redisUrlFrom } from './bullmq/redis/redis-url.js';
import { signingFrom, type SecretOptions } from './bullmq/trust/secret-source.js';
import type { Signing } from './bullmq/trust/signing.js';
import type { LocalBackendOptions } from './local/local-backend.js';
import type { BatchSettings } from './openai-batch/open-batch.js';

/**
 * Where a run's attempts run (`--backend`).
 * - `local`: this machine's worker threads and processes (backend/local/).
 * - `bullmq`: BullMQ jobs on the Redis at `url`, run by `csv-wave worker` processes on any machine (backend/bullmq/).
 */
export type BackendChoice = { type: 'local' } | { type: 'bullmq'; url: string; rate?: RateLimit };

/** This machine's threads and processes, for a run on it (LocalBackendOptions but the session). */
export type LocalSettings = Omit<LocalBackendOptions, 'sessionDir' | 'endCommandsIfOrphaned'>;

/** What a run asks of where its attempts run: the options the backends own. */
export interface BackendAsk {
  /** `--backend`. @default session.json's `backend`, else local */
  backend?: BackendChoice | undefined;
  /** `--redis-timeout`: bullmq only. */
  redisTimeoutSeconds?: number | undefined;
  /** `--secret-file`, `--insecure-no-secret`: bullmq only. */
  bullmqSecret?: SecretOptions | undefined;
  /** `--batch`: the model tasks go through OpenAI's Batch API with these settings; undefined: one request at a time. */
  batch: BatchSettings | undefined;
  /** For a run on this machine. */
  local: LocalSettings;
}

/**
 * The backend a run opens (openBackend), with its own settings:
 * - `local`: this machine's threads and processes;
 * - `batch`: OpenAI's Batch API, from this machine (`--batch`);
 * - `bullmq`: jobs on the Redis at `url`, signed with `signing`.
 */
export type BackendPlan =
  | { type: 'local'; local: LocalSettings }
  | { type: 'batch'; batch: BatchSettings }
  | { type: 'bullmq'; url: string; rate: RateLimit | undefined; redisTimeoutSeconds: number | undefined; signing: Signing };

/**
 * Where a run's attempts run, from its options over session.json's `backend`, each
 * backend's options checked here, before the run makes anything: an option of another
 * backend is refused (USAGE, naming the flag), and a bullmq run without a secret too.
 */
export function chooseBackend(ask: BackendAsk, config: SessionConfig['backend']): BackendPlan {
  const where = ask.backend ?? backendFromConfig(config);
  if (where.type !== 'bullmq') {
    if (ask.redisTimeoutSeconds !== undefined) {
      throw new WaveError('USAGE', '--redis-timeout goes with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    if (ask.bullmqSecret !== undefined) {
      throw new WaveError('USAGE', '--secret-file and --insecure-no-secret go with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    return ask.batch === undefined ? { type: 'local', local: ask.local } : { type: 'batch', batch: ask.batch };
  }
  // A batch waits hours at OpenAI for one wave: workers on many machines would hold nothing.
  if (ask.batch !== undefined) {
    throw new WaveError('USAGE', '--batch sends the model tasks through OpenAI\'s Batch API from this machine; it does not go with --backend bullmq (drop one of them)');
  }
  const rate = where.rate ?? configuredRate(config);
  const signing = signingFrom(ask.bullmqSecret ?? {}, 'A run with --backend bullmq');
  return { type: 'bullmq', url: where.url, rate, redisTimeoutSeconds: ask.redisTimeoutSeconds, signing };
}

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
