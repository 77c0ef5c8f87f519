import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kWorkerExecutorTypes } from '../../src/option-table.js';
import { kNoSecret, readyWorker, readyWorkerWith, redisForFile } from '../helpers/bullmq-session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCliWith, type SpawnedCli } from '../helpers/spawn-cli.js';
import { kTestSecret } from '../helpers/test-secret.js';

/** Runs `fn` with CSV_WAVE_SECRET set to `value` (removed with undefined) in this process, as the CLI run in process reads it. */
async function withSecretEnv<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env['CSV_WAVE_SECRET'];
  if (value === undefined) delete process.env['CSV_WAVE_SECRET'];
  else process.env['CSV_WAVE_SECRET'] = value;
  try {
    return await fn();
  } finally {
    process.env['CSV_WAVE_SECRET'] = saved;
  }
}

/** A file holding `text`, with mode `mode`. */
function secretFile(text: string, mode: number): string {
  const path = join(mkdtempSync(join(tmpdir(), 'csv-wave-secret-')), 'secret');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

const kHowTo = /make one with `openssl rand -hex 32` and give the same one to the coordinator and to every worker, in CSV_WAVE_SECRET or in a file only you can read \(chmod 600\) passed with --secret-file PATH/;

const redis = redisForFile();

describe.runIf(kRunRedisTests)('the secret of a bullmq run and of its workers', () => {
  const workers: SpawnedCli[] = [];
  afterAll(() => {
    for (const worker of workers) worker.child.kill('SIGKILL');
  });

  it('a run without a secret is refused with exit 2 before it makes anything, saying how to make one (flags or session.json)', { timeout: 300_000 }, async () => {
    // A worker is there: without the refusal the run would just run.
    workers.push(await readyWorker(redis.url, '--session-id', 'no-secret'));
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'no-secret' });
    const run = await withSecretEnv(undefined, () => runCli('run', dir, '--cmd', 'echo ran', '--backend', 'bullmq', '--redis', redis.url));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('A run with --backend bullmq needs a secret shared by the coordinator and its workers, which never goes through Redis');
    expect(run.stderr).toMatch(kHowTo);
    expect(run.stderr).toContain('Or pass --insecure-no-secret');
    expect(readRows(dir).get('A')?.status).not.toBe('completed');

    const configured = buildSession([{ id: 'A', description: 'a', role: 'worker' }], {
      session: JSON.stringify({ pipeline: 'generic', backend: { type: 'bullmq', url: redis.url } }),
    });
    const fromConfig = await withSecretEnv(undefined, () => runCli('run', configured, '--cmd', 'echo ran'));
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stderr).toMatch(kHowTo);
    // Refused before the session got an id, a queue or a registration.
    expect(existsSync(join(configured, '.csv-wave', 'session-id'))).toBe(false);
  });

  it('a worker without a secret is refused with exit 2, saying how to make one', async () => {
    const worker = await withSecretEnv(undefined, () => runCli('worker', '--redis', redis.url));
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('csv-wave worker needs a secret');
    expect(worker.stderr).toMatch(kHowTo);
  });

  it.each([
    ['an empty CSV_WAVE_SECRET', '', /the secret in CSV_WAVE_SECRET is empty; a secret has at least 32/],
    ['a short CSV_WAVE_SECRET', 'hunter2', /the secret in CSV_WAVE_SECRET has 7 characters; a secret has at least 32/],
  ])('%s is refused with exit 2, by a run and by a worker', async (_what, value, message) => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }]);
    const run = await withSecretEnv(value, () => runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', redis.url));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    const worker = await withSecretEnv(value, () => runCli('worker', '--redis', redis.url));
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(message);
  });

  it('--secret-file: one other users can read is refused (chmod 600), one they cannot is used', { timeout: 300_000 }, async () => {
    const open = secretFile(`${kTestSecret}\n`, 0o644);
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'secret-file' });
    const refused = await runCli('worker', '--redis', redis.url, '--secret-file', open);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--secret-file ${open} can be read by other users of this machine (mode 644): \`chmod 600 ${open}\``);
    const missing = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', redis.url, '--secret-file', join(open, 'nothing'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot be read (ENOTDIR)');
    const local = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'local', '--secret-file', open);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--secret-file and --insecure-no-secret go with --backend bullmq');

    // The file's secret (its final newline aside) is the one of CSV_WAVE_SECRET: this worker and the coordinator agree.
    const closed = secretFile(`${kTestSecret}\n`, 0o600);
    workers.push(await readyWorkerWith(kNoSecret, redis.url, '--session-id', 'secret-file', '--secret-file', closed));
    const run = await withSecretEnv(undefined, () => runCli('run', dir, '--cmd', 'echo ran-{id}', '--backend', 'bullmq', '--redis', redis.url, '--secret-file', closed));
    expect(run.code, run.stderr).toBe(0);
    expect(readRows(dir).get('A')?.findings).toBe('ran-A');
  });

  it('--insecure-no-secret runs without a secret, on both sides, and says what that means; with a secret it is refused', { timeout: 300_000 }, async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'worker' }], { sessionId: 'insecure' });
    const both = await runCli('run', dir, '--cmd', 'echo x', '--backend', 'bullmq', '--redis', redis.url, '--insecure-no-secret');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--insecure-no-secret goes without a secret, but CSV_WAVE_SECRET gives one: drop one of them');

    workers.push(await readyWorkerWith(kNoSecret, redis.url, '--session-id', 'insecure', '--insecure-no-secret'));
    const run = await spawnCliWith(kNoSecret, 'run', dir, '--cmd', 'echo ran-{id}', '--backend', 'bullmq', '--redis', redis.url, '--insecure-no-secret').exited;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('--insecure-no-secret: jobs and replies are not signed; whoever can write to the Redis can run commands on the workers');
    expect(readRows(dir).get('A')?.findings).toBe('ran-A');
  });

  it.each([
    [['--executors', 'command,shell'], `Expected \`--executors\` to be a comma-separated list of ${kWorkerExecutorTypes.join(', ')}, got \`command,shell\``],
    [['--allow-base-url', 'file:///etc/passwd'], 'Expected `--allow-base-url` to be an http(s) URL without a user or password'],
    [['--allow-base-url', 'http://user:pw@127.0.0.1:1/v1'], 'Expected `--allow-base-url` to be an http(s) URL without a user or password'],
    [['--max-sessions', '0'], 'Expected `--max-sessions` to be a positive integer, got `0`'],
  ])('worker %j is exit 2, naming the flag', async (flags, message) => {
    const worker = await runCli('worker', '--redis', redis.url, ...flags);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain(message);
  });

  it('--help names the new flags', async () => {
    const worker = await runCli('worker', '--help');
    for (const flag of ['--secret-file', '--insecure-no-secret', '--executors', '--allow-base-url', '--max-sessions']) expect(worker.stdout).toContain(flag);
    const run = await runCli('run', '--help');
    for (const flag of ['--secret-file', '--insecure-no-secret']) expect(run.stdout).toContain(flag);
  });
});
