import type { Command } from 'commander';
import type { BullmqWorker } from '../../backend/bullmq/bullmq-worker.js';
import { baseUrlKey, kExecutorTypes, kOfficialBaseUrl, type ExecutorType, type WorkerRules } from '../../backend/bullmq/trust/job-admission.js';
import { kSessionIdPattern } from '../../backend/bullmq/jobs/names.js';
import { redisUrlFrom } from '../../backend/bullmq/redis/redis-url.js';
import { kSecretEnv, signingFrom } from '../../backend/bullmq/trust/secret-source.js';
import { kDefaultMaxSessions } from '../../backend/bullmq/session/session-registry.js';
import { WaveError } from '../../errors.js';
import { kInsecureHelp, kSecretFileHelp, secretFromFlags } from '../backend-flag.js';
import { ExitCode, processIo, type CliIo } from '../io.js';

interface WorkerFlags {
  redis?: string;
  concurrency?: string;
  sessionId?: string;
  stalledInterval?: string;
  workdir?: string;
  secretFile?: string;
  insecureNoSecret?: boolean;
  executors?: string;
  allowBaseUrl: string[];
  maxSessions?: string;
}

function positive(flag: string, text: string | undefined, integer: boolean): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new WaveError('USAGE', `Expected \`--${flag}\` to be a positive ${integer ? 'integer' : 'number'}, got \`${text}\``);
  }
  return value;
}

export function registerWorker(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('worker')
    .description("take the jobs of a session run with --backend bullmq from Redis and run them (on any machine)")
    .option('--redis <url>', 'the Redis URL (default CSV_WAVE_REDIS_URL)')
    .option('--session-id <id>', "serve only this session (its .csv-wave/session-id, printed by the run) (default: every running session)")
    .option('--concurrency <n>', 'jobs at once, per session served (default 1)')
    .option('--stalled-interval <seconds>', "how often to look for jobs whose worker died and give them to another (default 30)")
    .option('--workdir <dir>', 'where command tasks run (default: a fresh temporary folder per job)')
    .option('--secret-file <path>', kSecretFileHelp.replace('with the bullmq backend: ', ''))
    .option('--insecure-no-secret', kInsecureHelp.replace('with the bullmq backend: ', ''))
    .option('--executors <list>', `the executors this worker runs, comma-separated: ${kExecutorTypes.join(', ')}; a job of another is refused (default all)`)
    .option(
      '--allow-base-url <url>',
      `a model server openai jobs may send this worker's OPENAI_API_KEY to; repeat for more; a job naming another is refused (default: OPENAI_BASE_URL, else ${kOfficialBaseUrl})`,
      (url: string, urls: string[]) => [...urls, url],
      [] as string[],
    )
    .option('--max-sessions <n>', `without --session-id: the running sessions served at once at most, the most recently beaten (default ${kDefaultMaxSessions})`)
    .action(async (flags: WorkerFlags) => {
      const url = redisUrlFrom(flags.redis);
      if (url === undefined) throw new WaveError('USAGE', 'csv-wave worker needs --redis URL (or CSV_WAVE_REDIS_URL)');
      const rules = workerRules(flags);
      // The jobs' commands and modules get the worker's environment: not the secret, with which any task could sign jobs.
      if (io === processIo) delete process.env[kSecretEnv];
      if (flags.sessionId !== undefined && !kSessionIdPattern.test(flags.sessionId)) {
        throw new WaveError(
          'USAGE',
          `Expected \`--session-id\` to be a session id (letters, digits, . _ -): the session's .csv-wave/session-id, got \`${flags.sessionId}\`; leave it out to serve every running session`,
        );
      }
      const stalled = positive('stalled-interval', flags.stalledInterval, false);
      const lines = batchedLines((text) => io.stdout(text));
      // Loaded here, not with every command: BullMQ and ioredis are most of a start-up.
      const { BullmqWorker } = await import('../../backend/bullmq/bullmq-worker.js');
      const worker = await BullmqWorker.start({
        url,
        ...(flags.sessionId === undefined ? {} : { sessionId: flags.sessionId }),
        concurrency: positive('concurrency', flags.concurrency, true) ?? 1,
        rules,
        ...(flags.maxSessions === undefined ? {} : { maxSessions: positive('max-sessions', flags.maxSessions, true)! }),
        ...(stalled === undefined ? {} : { stalledIntervalMs: stalled * 1000 }),
        ...(flags.workdir === undefined ? {} : { workdir: flags.workdir }),
        log: lines.log,
      });
      let stopped: 'closed' | 'at-once' = 'closed';
      if (io === processIo) {
        // A worker ended by an error (or process.exit) still writes the lines of its last jobs.
        process.once('exit', lines.flush);
        stopped = await untilStopped(worker, io);
      }
      lines.flush();
      done(ExitCode.Ok);
      // Stopped at once, with Redis perhaps gone: BullMQ's close of the dropped connections
      // never ends, and its stalled-job and lock-renewal timers stay armed until it does, so
      // the process would live on with nothing left to do. Its jobs are left to other workers
      // and its commands are killed; stdout and stderr are pipes or files (written at once).
      if (stopped === 'at-once') setImmediate(() => process.exit(ExitCode.Ok));
    });
}

/** What the worker runs (job-admission.ts): its secret, `--executors`, `--allow-base-url`. */
function workerRules(flags: WorkerFlags): WorkerRules {
  const signing = signingFrom(secretFromFlags(flags) ?? {}, 'csv-wave worker');
  const executors = new Set<ExecutorType>();
  for (const name of (flags.executors ?? kExecutorTypes.join(',')).split(',').map((part) => part.trim())) {
    if (!(kExecutorTypes as readonly string[]).includes(name)) {
      throw new WaveError('USAGE', `Expected \`--executors\` to be a comma-separated list of ${kExecutorTypes.join(', ')}, got \`${flags.executors}\``);
    }
    executors.add(name as ExecutorType);
  }
  const ownBaseUrl = process.env['OPENAI_BASE_URL']?.trim() || undefined;
  const baseUrls = new Set<string>();
  for (const allowed of flags.allowBaseUrl.length > 0 ? flags.allowBaseUrl : [ownBaseUrl ?? kOfficialBaseUrl]) {
    const key = baseUrlKey(allowed);
    if (key === undefined) {
      const where = flags.allowBaseUrl.length > 0 ? '`--allow-base-url`' : 'OPENAI_BASE_URL';
      throw new WaveError('USAGE', `Expected ${where} to be an http(s) URL without a user or password, e.g. http://127.0.0.1:8080/v1, got \`${allowed}\``);
    }
    baseUrls.add(key);
  }
  return { signing, executors, baseUrls, ownBaseUrl };
}

/** How long the worker's lines wait to be written together. */
const kLinesMs = 50;

/**
 * The worker's lines (one per job), written together every kLinesMs: a write of its own
 * per job was a third of the worker's CPU for a no-op job (a system call, slow on a busy
 * machine). `flush` writes what waits at once.
 */
function batchedLines(write: (text: string) => void): { log: (line: string) => void; flush: () => void } {
  let waiting = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting === '') return;
    const text = waiting;
    waiting = '';
    write(text);
  };
  return {
    log: (line) => {
      waiting += `${line}\n`;
      timer ??= setTimeout(flush, kLinesMs).unref();
    },
    flush,
  };
}

/**
 * The first SIGINT or SIGTERM stops taking jobs and lets the running ones finish; a second
 * one, or the first when Redis does not answer (a finished job could not be handed back),
 * kills their commands and leaves the jobs to BullMQ (another worker takes them over),
 * without waiting for Redis.
 */
function untilStopped(worker: BullmqWorker, io: CliIo): Promise<'closed' | 'at-once'> {
  return new Promise((resolve, reject) => {
    let signals = 0;
    const stopNow = () => worker.stopNow().then(() => finish('at-once'), reject);
    const handler = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        io.stderr(`${signal}: killing the running commands and leaving their jobs to other workers\n`);
        void stopNow();
        return;
      }
      void worker.redisAnswers().then((answers) => {
        if (signals > 1) return;
        if (!answers) {
          io.stderr(`${signal}: Redis at ${worker.redisShown} cannot be reached: killing the running commands and leaving their jobs to other workers\n`);
          void stopNow();
          return;
        }
        io.stderr(`${signal}: taking no more jobs; the running ones finish first (again to leave them to other workers)\n`);
        worker.close().then(() => finish('closed'), reject);
      });
    };
    let finished = false;
    const finish = (how: 'closed' | 'at-once') => {
      if (finished) return;
      finished = true;
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      resolve(how);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}
