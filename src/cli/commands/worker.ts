import type { Command } from 'commander';
import type { BullmqWorker } from '../../backend/bullmq/bullmq-worker.js';
import { baseUrlKey, kAgentTypes, kDefaultSandbox, type AgentType, type ExecutorType, type WorkerRules } from '../../backend/bullmq/trust/job-admission.js';
import { redisUrlFrom } from '../../backend/bullmq/redis/redis-url.js';
import { kSecretEnv, signingFrom } from '../../backend/bullmq/trust/secret-source.js';
import { WaveError } from '../../errors.js';
import { checkExecutor } from '../../run/check-executor.js';
import { flagOptionEntries, kAnthropicBaseUrl, kFlagDefaults, kFlagOptionTable, kOfficialBaseUrl, kWorkerSandboxes } from '../../option-table.js';
import { secretFromFlags } from '../backend-flag.js';
import { addTableFlags, tableFlag } from '../table-flags.js';
import { ExitCode, processIo, type CliIo } from '../io.js';

/** The worker's flags as commander hands them over (their definitions: option-table.ts' kFlagOptionTable). */
interface WorkerFlags {
  redis?: string;
  concurrency?: string;
  sessionId?: string;
  stalledInterval?: string;
  workdir?: string;
  secretFile?: string;
  insecureNoSecret?: boolean;
  executors?: string;
  allowBaseUrl?: string[];
  allowSandbox?: string[];
  allowAgentArgs?: boolean;
  maxSessions?: string;
}

export function registerWorker(program: Command, io: CliIo, done: (code: number) => void): void {
  const command = program
    .command('worker')
    .description("take the jobs of a session run with --backend bullmq from Redis and run them (on any machine)");
  addTableFlags(command, flagOptionEntries(), 'worker')
    .action(async (flags: WorkerFlags) => {
      const url = redisUrlFrom(tableFlag(kFlagOptionTable.workerRedis, flags));
      if (url === undefined) throw new WaveError('USAGE', 'csv-wave worker needs --redis URL (or CSV_WAVE_REDIS_URL)');
      const rules = workerRules(flags);
      // The jobs' commands and modules get the worker's environment: not the secret, with which any task could sign jobs.
      if (io === processIo) delete process.env[kSecretEnv];
      // Every flag is checked before BullMQ loads or Redis is reached.
      const sessionId = tableFlag(kFlagOptionTable.sessionId, flags);
      const concurrency = tableFlag(kFlagOptionTable.workerConcurrency, flags) ?? kFlagDefaults.workerConcurrency;
      const maxSessions = tableFlag(kFlagOptionTable.maxSessions, flags);
      const stalled = tableFlag(kFlagOptionTable.stalledIntervalSeconds, flags);
      const workdir = tableFlag(kFlagOptionTable.workdir, flags);
      await checkAgentClis(rules.executors);
      const lines = batchedLines((text) => io.stdout(text));
      // Loaded here, not with every command: BullMQ and ioredis are most of a start-up.
      const { BullmqWorker } = await import('../../backend/bullmq/bullmq-worker.js');
      const worker = await BullmqWorker.start({
        url,
        ...(sessionId === undefined ? {} : { sessionId }),
        concurrency,
        rules,
        ...(maxSessions === undefined ? {} : { maxSessions }),
        ...(stalled === undefined ? {} : { stalledIntervalMs: stalled * 1000 }),
        ...(workdir === undefined ? {} : { workdir }),
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

/** What the worker runs (job-admission.ts): its secret, `--executors`, `--allow-base-url`, `--allow-sandbox`, `--allow-agent-args`. */
function workerRules(flags: WorkerFlags): WorkerRules {
  const signing = signingFrom(secretFromFlags(flags) ?? {}, 'csv-wave worker');
  const executors = new Set<ExecutorType>(tableFlag(kFlagOptionTable.executors, flags) ?? kFlagOptionTable.executors.default);
  const ownBaseUrl = process.env['OPENAI_BASE_URL']?.trim() || undefined;
  const allowed = tableFlag(kFlagOptionTable.allowBaseUrls, flags);
  const baseUrls = baseUrlKeys(allowed, ['OPENAI_BASE_URL', ownBaseUrl ?? kOfficialBaseUrl]);
  // Without --allow-base-url, each key goes only where the worker sends it already: claude's to its own ANTHROPIC_BASE_URL.
  const claudeBaseUrls = executors.has('claude')
    ? baseUrlKeys(allowed, ['ANTHROPIC_BASE_URL', process.env['ANTHROPIC_BASE_URL']?.trim() || kAnthropicBaseUrl])
    : new Set<string>();
  const sandboxes = new Set<string>([kDefaultSandbox]);
  for (const each of tableFlag(kFlagOptionTable.allowSandboxes, flags) ?? []) {
    if (!(kWorkerSandboxes as readonly string[]).includes(each)) {
      throw new WaveError('USAGE', `Expected \`--allow-sandbox\` to be ${kFlagOptionTable.allowSandboxes.what}, got \`${each}\``);
    }
    sandboxes.add(each);
  }
  const agentArgs = tableFlag(kFlagOptionTable.allowAgentArgs, flags) ?? false;
  return { signing, executors, baseUrls, ownBaseUrl, claudeBaseUrls, sandboxes, agentArgs };
}

/** The allow-list of model servers: `--allow-base-url`'s, else the one default (its variable's name, its value), as baseUrlKey gives them. */
function baseUrlKeys(allowed: readonly string[] | undefined, [variable, fallback]: [string, string]): Set<string> {
  const keys = new Set<string>();
  for (const each of allowed ?? [fallback]) {
    const key = baseUrlKey(each);
    if (key === undefined) {
      const where = allowed === undefined ? variable : '`--allow-base-url`';
      throw new WaveError('USAGE', `Expected ${where} to be ${kFlagOptionTable.allowBaseUrls.what}, e.g. http://127.0.0.1:8080/v1, got \`${each}\``);
    }
    keys.add(key);
  }
  return keys;
}

/**
 * The agent CLIs the worker offers, checked once before it takes a job, as a run checks
 * its own (check-executor.ts: on PATH, `--version` no older than csv-wave runs, and
 * claude's login as far as it shows without the network): a worker whose CLI is missing
 * would otherwise fail every agent job it takes. Exit 2 saying what to do.
 */
async function checkAgentClis(executors: ReadonlySet<ExecutorType>): Promise<void> {
  const agents = kAgentTypes.filter((type: AgentType) => executors.has(type));
  for (const type of agents) {
    try {
      await checkExecutor({ type, model: 'worker-check' }, [], process.cwd());
    } catch (error) {
      if (!(error instanceof WaveError)) throw error;
      throw new WaveError(error.code, `csv-wave worker --executors ${type}: ${error.message.replace(/^--executor \S+: /, '')}`, { cause: error });
    }
  }
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
