import type { Command } from 'commander';
import type { BackendChoice } from '../backend/backend-choice.js';
import { WaveError } from '../errors.js';
import { redisUrlFrom } from '../backend/bullmq/redis/redis-url.js';
import type { SecretOptions } from '../backend/bullmq/trust/secret-source.js';
import { flagOptionEntries, kFlagOptionTable } from '../option-table.js';
import { addTableFlags, tableFlag } from './table-flags.js';

/** The backend's flags as commander hands them over (their definitions: option-table.ts' kFlagOptionTable). */
export interface BackendFlags {
  backend?: 'local' | 'bullmq';
  redis?: string;
  redisTimeout?: string;
  rate?: string;
  secretFile?: string;
  insecureNoSecret?: boolean;
}

/** `--backend`, `--redis`, `--rate`, `--redis-timeout` and the secret's flags, on run, resume and rerun. */
export function addBackendFlags(command: Command): Command {
  return addTableFlags(command, flagOptionEntries(), 'run');
}

/**
 * The backend the flags ask for; undefined leaves the default (local). `--redis-timeout`
 * also goes with a bullmq backend that session.json names (runSession refuses it otherwise).
 */
export function backendFromFlags(flags: BackendFlags): { backend?: BackendChoice; redisTimeoutSeconds?: number; bullmqSecret?: SecretOptions } {
  const timeout = tableFlag(kFlagOptionTable.redisTimeoutSeconds, flags);
  if (timeout !== undefined && flags.backend === 'local') throw new WaveError('USAGE', '--redis-timeout goes with --backend bullmq');
  const secret = secretFromFlags(flags);
  if (secret !== undefined && flags.backend === 'local') throw new WaveError('USAGE', '--secret-file and --insecure-no-secret go with --backend bullmq');
  return {
    ...backendChoiceFromFlags(flags),
    ...(timeout === undefined ? {} : { redisTimeoutSeconds: timeout }),
    ...(secret === undefined ? {} : { bullmqSecret: secret }),
  };
}

/** `--secret-file` and `--insecure-no-secret` (checked against each other and CSV_WAVE_SECRET where the secret is read: secret-source.ts). */
export function secretFromFlags(flags: Pick<BackendFlags, 'secretFile' | 'insecureNoSecret'>): SecretOptions | undefined {
  const secretFile = tableFlag(kFlagOptionTable.secretFile, flags);
  const insecure = tableFlag(kFlagOptionTable.insecureNoSecret, flags) ?? kFlagOptionTable.insecureNoSecret.default;
  if (secretFile === undefined && !insecure) return undefined;
  return { ...(secretFile === undefined ? {} : { secretFile }), ...(insecure ? { insecureNoSecret: true } : {}) };
}

function backendChoiceFromFlags(flags: BackendFlags): { backend?: BackendChoice } {
  const backend = tableFlag(kFlagOptionTable.backend, flags);
  if (backend !== 'bullmq') {
    if (flags.redis !== undefined) throw new WaveError('USAGE', '--redis goes with --backend bullmq');
    if (flags.rate !== undefined) throw new WaveError('USAGE', '--rate goes with --backend bullmq (it limits the attempts all workers start)');
    return backend === undefined ? {} : { backend: { type: 'local' } };
  }
  // The URL's form is checked where CSV_WAVE_REDIS_URL's is, with its password masked (redis-url.ts).
  const url = redisUrlFrom(tableFlag(kFlagOptionTable.redis, flags));
  if (url === undefined) throw new WaveError('USAGE', '--backend bullmq needs --redis URL (or CSV_WAVE_REDIS_URL)');
  const rate = tableFlag(kFlagOptionTable.rate, flags);
  return { backend: { type: 'bullmq', url, ...(rate === undefined ? {} : { rate }) } };
}
