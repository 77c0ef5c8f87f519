import { readFileSync, statSync } from 'node:fs';
import { WaveError } from '../../../errors.js';
import { kMinSecretLength, Signing } from './signing.js';

/** The environment variable that holds the secret of coordinators and workers. */
export const kSecretEnv = 'CSV_WAVE_SECRET';

/** Where a bullmq run's or a worker's secret comes from (signing.ts). */
export interface SecretOptions {
  /** The secret itself (the library's way). @default the file's, else CSV_WAVE_SECRET */
  secret?: string;
  /** A file holding the secret, readable by its owner only (`--secret-file`). @default CSV_WAVE_SECRET */
  secretFile?: string;
  /**
   * Run without a secret: jobs and replies go unsigned and are taken unsigned, so anyone who
   * can write to the Redis runs commands on the workers (`--insecure-no-secret`). @default false
   */
  insecureNoSecret?: boolean;
}

/** How to make a secret, said wherever one is missing or refused. */
const kHowTo =
  'make one with `openssl rand -hex 32` and give the same one to the coordinator and to every worker, ' +
  `in ${kSecretEnv} or in a file only you can read (chmod 600) passed with --secret-file PATH`;

/**
 * The signing of a coordinator or a worker (`who`: what the messages name), from the
 * options and the environment. No secret at all is a usage error (exit 2) saying how to make
 * one, unless `insecureNoSecret` says explicitly to run without; a secret and that flag
 * together are refused too, as they contradict each other.
 */
export function signingFrom(options: SecretOptions, who: string, env: NodeJS.ProcessEnv = process.env): Signing {
  const fromEnv = env[kSecretEnv];
  if (options.insecureNoSecret) {
    const given = options.secret !== undefined ? 'a secret' : options.secretFile !== undefined ? '--secret-file' : fromEnv !== undefined ? kSecretEnv : undefined;
    if (given !== undefined) throw new WaveError('USAGE', `--insecure-no-secret goes without a secret, but ${given} gives one: drop one of them`);
    return Signing.insecure();
  }
  if (options.secret !== undefined) return checked(options.secret, 'the secret given');
  if (options.secretFile !== undefined) return checked(readSecretFile(options.secretFile), `the secret in ${options.secretFile} (--secret-file)`);
  if (fromEnv !== undefined) return checked(fromEnv, `the secret in ${kSecretEnv}`);
  throw new WaveError(
    'USAGE',
    `${who} needs a secret shared by the coordinator and its workers, which never goes through Redis ` +
      `(whoever can write to the Redis could otherwise run commands on the workers): ${kHowTo}. ` +
      'Or pass --insecure-no-secret to run unsigned jobs on a Redis only you can reach',
  );
}

function checked(text: string, what: string): Signing {
  // A file's final newline, or spaces pasted around the value, are not part of the secret.
  const secret = text.trim();
  if (secret.length < kMinSecretLength) {
    const found = secret.length === 0 ? 'is empty' : `has ${secret.length} characters`;
    throw new WaveError('USAGE', `${what} ${found}; a secret has at least ${kMinSecretLength}: ${kHowTo}`);
  }
  return Signing.withSecret(secret);
}

/** The text of `--secret-file`, refused when it is not a file of its own or other users can read or change it. */
function readSecretFile(path: string): string {
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new WaveError('USAGE', `--secret-file ${path} is not a file: give the path of the file that holds the secret`);
    mode = stat.mode;
  } catch (error) {
    if (error instanceof WaveError) throw error;
    throw new WaveError('USAGE', `--secret-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): ${kHowTo}`, { path, cause: error });
  }
  // Windows has no such modes: there the folder's access rules are the guard.
  if (process.platform !== 'win32' && (mode & 0o026) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(3, '0');
    throw new WaveError(
      'USAGE',
      `--secret-file ${path} can be ${(mode & 0o004) !== 0 ? 'read' : 'changed'} by other users of this machine (mode ${octal}): \`chmod 600 ${path}\``,
      { path },
    );
  }
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new WaveError('USAGE', `--secret-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { path, cause: error });
  }
}
