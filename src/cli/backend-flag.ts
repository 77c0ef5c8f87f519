import { Option, type Command } from 'commander';
import type { BackendChoice } from '../backend/backend-choice.js';
import { WaveError } from '../errors.js';
import { parseRate } from '../backend/bullmq/redis/rate.js';
import { redisUrlFrom } from '../backend/bullmq/redis/redis-url.js';
import type { SecretOptions } from '../backend/bullmq/trust/secret-source.js';

export interface BackendFlags {
  backend?: 'local' | 'bullmq';
  redis?: string;
  redisTimeout?: string;
  rate?: string;
  secretFile?: string;
  insecureNoSecret?: boolean;
}

/** The help of `--secret-file` and `--insecure-no-secret`, the same on run, resume, rerun and worker. */
export const kSecretFileHelp =
  'with the bullmq backend: a file (chmod 600) holding the secret that coordinators and workers sign jobs and replies with (default CSV_WAVE_SECRET; make one with `openssl rand -hex 32`)';
export const kInsecureHelp =
  'with the bullmq backend: run without a secret, jobs and replies unsigned: whoever can write to the Redis can then run commands on the workers (only for a Redis no one else reaches)';

/** `--backend` and `--redis`, on run, resume and rerun. */
export function addBackendFlags(command: Command): Command {
  return command
    .addOption(
      new Option('--backend <type>', 'where tasks run: local (this machine) or bullmq (workers on any machine, through Redis) (default local)').choices([
        'local',
        'bullmq',
      ]),
    )
    .option('--redis <url>', 'with --backend bullmq: the Redis URL (default CSV_WAVE_REDIS_URL)')
    .option(
      '--redis-timeout <seconds>',
      'with the bullmq backend: how long Redis may be away, or refuse writes (full at maxmemory), during a run before it stops (resumable, exit 1) (default 60)',
    )
    .option('--rate <n/unit>', 'with --backend bullmq: attempts started per second or minute across all workers, as 20/s or 600/min (default no limit)')
    .option('--secret-file <path>', kSecretFileHelp)
    .option('--insecure-no-secret', kInsecureHelp);
}

/**
 * The backend the flags ask for; undefined leaves the default (local). `--redis-timeout`
 * also goes with a bullmq backend that session.json names (runSession refuses it otherwise).
 */
export function backendFromFlags(flags: BackendFlags): { backend?: BackendChoice; redisTimeoutSeconds?: number; bullmqSecret?: SecretOptions } {
  const timeout = redisTimeoutFrom(flags.redisTimeout);
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
  if (flags.secretFile === undefined && !flags.insecureNoSecret) return undefined;
  return { ...(flags.secretFile === undefined ? {} : { secretFile: flags.secretFile }), ...(flags.insecureNoSecret ? { insecureNoSecret: true } : {}) };
}

function backendChoiceFromFlags(flags: BackendFlags): { backend?: BackendChoice } {
  if (flags.backend !== 'bullmq') {
    if (flags.redis !== undefined) throw new WaveError('USAGE', '--redis goes with --backend bullmq');
    if (flags.rate !== undefined) throw new WaveError('USAGE', '--rate goes with --backend bullmq (it limits the attempts all workers start)');
    return flags.backend === undefined ? {} : { backend: { type: 'local' } };
  }
  const url = redisUrlFrom(flags.redis);
  if (url === undefined) throw new WaveError('USAGE', '--backend bullmq needs --redis URL (or CSV_WAVE_REDIS_URL)');
  return { backend: { type: 'bullmq', url, ...(flags.rate === undefined ? {} : { rate: parseRate(flags.rate, '--rate') }) } };
}

function redisTimeoutFrom(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || !(seconds > 0)) {
    throw new WaveError('USAGE', `Expected \`--redis-timeout\` to be a positive number of seconds, got \`${text}\`: e.g. --redis-timeout 60`);
  }
  return seconds;
}
