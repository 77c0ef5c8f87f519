import { z } from 'zod';
import { WaveError } from './errors.js';
import { kMaxTimerSeconds } from './process/timer-range.js';

/*
 * The one table of csv-wave's options: the run options, then the backend's and the
 * worker's flags (kFlagOptionTable, below). Each definition says where the option may be
 * given (a flag, a session.json key, the library), its type with its bounds, its default
 * and one doc line. The commander flags and their help, session.json's schema for these
 * keys, `RunOptions`, `normalize` and docs/options.md are all made from it.
 *
 * This file sits just above the leaves (it reads zod, WaveError and the timers' range
 * only): the schema layer reads it, and so do the modules that fall back on a default when
 * used alone (kRunDefaults). The defaults live here and nowhere else.
 */

/** The commands that take options from the table. */
export type OptionCommand = 'run' | 'resume' | 'rerun' | 'worker' | 'status';

export interface OptionDefinition<T = unknown> {
  /** The flag as commander takes it: `--concurrency <n>`; absent when no command line sets it. */
  flag?: string;
  /** The key in session.json; absent when session.json does not take it. */
  key?: string;
  /** The value with its bounds; every source (flag, session.json, library) is checked against it. */
  type: z.ZodType<T>;
  /** The type in words, as messages and docs say it: ``Expected `--retries` to be an integer ≥ 0``. */
  what: string;
  /**
   * How the flag's text becomes the value: a number (the default), `scale`d (seconds to
   * ms), a parser of its own, or nothing for a flag without a value (`--bom`) or with
   * commander's choices. The type checks what it gives (a list's names, `--executors`).
   */
  fromText?: 'number' | 'none' | { scale: number; what: string } | ((text: string) => unknown);
  /** The values commander offers (and refuses others). */
  choices?: readonly string[];
  /** A second flag that gives the option `false`: `--no-cache` beside `--cache <mode>`. */
  negation?: string;
  /** The flag may be given again, each value added to a list (`--allow-base-url`); its value is that list. */
  repeatable?: true;
  /** The value when no source gives one; absent when there is none or it depends on other options. */
  default?: T;
  /** The default in words, for help and docs. */
  defaultText: string;
  /** One line: what the option does. */
  doc: string;
  /** The commands whose flags include it (none: library and session.json only). */
  commands: readonly OptionCommand[];
}

const kRunCommands = ['run', 'resume', 'rerun'] as const satisfies readonly OptionCommand[];

/**
 * A definition, with its value's type taken from its zod type (the default must fit it)
 * and its session.json key kept as a literal (SessionConfig's keys come from it).
 */
function option<S extends z.ZodType, const K extends string = never>(
  definition: Omit<OptionDefinition<z.output<S>>, 'type' | 'key'> & { type: S; key?: K },
): OptionDefinition<z.output<S>> & { type: S; key?: K } {
  return definition as OptionDefinition<z.output<S>> & { type: S; key?: K };
}

const positiveInteger = z.number().int().positive();
/** Byte caps start at 1 KiB: a smaller one is a unit mistake (megabytes meant), not a wish. */
const byteCap = z.number().int().min(1024);
/** Seconds a timer can wait (see kMaxTimerSeconds); 0 is allowed (no limit, or no grace). */
const timerSeconds = z.number().min(0).max(kMaxTimerSeconds);
const kTimerSecondsText = `a number of seconds from 0 to ${kMaxTimerSeconds} (24 days)`;

/** How a command's stdout becomes its result (`--output`, session.json `output`). */
export const kOutputModes = [
  /** A JSON object with a `status` or `findings` key (all of stdout, or its last line) is the result; anything else is text. */
  'auto',
  /** stdout must hold a result object (all of it, or its last line); text fails the task. */
  'result',
  /** stdout is the findings, whatever it looks like, JSON included. */
  'text',
] as const;
export type OutputMode = (typeof kOutputModes)[number];

/** Where a command or agent task works (`--workdir`, session.json `workdir`). */
export const kWorkdirModes = [
  /** The session folder, as it always was. */
  'session',
  /** A folder of the task's own, `workdirs/<id>` in the session folder, emptied before each attempt. */
  'task',
  /** A git worktree of the session's repository per task, on the branch `csv-wave/<session id>/<task id>`. */
  'worktree',
] as const;
export type WorkdirMode = (typeof kWorkdirModes)[number];

/** Where a repair request goes in batch mode: into the next batch, or at once as a synchronous call. */
export const kBatchRepairModes = ['batch', 'sync'] as const;
export type BatchRepair = (typeof kBatchRepairModes)[number];

/** Which finished tasks get `discoveries/<id>.json`. */
export const kDiscoveryFilePolicies = [
  /** Every finished task. */
  'always',
  /** Only a task whose result holds more than its row (or that failed). */
  'when-rich',
] as const;

/**
 * The result cache's modes as the `--cache` flag names them (docs/cache.md). The option's
 * value is true, 'read' or false, as session.json's `cache` key takes it.
 */
export const kCacheModes = [
  /** A task whose inputs are unchanged takes its earlier result; every new result is written. */
  'on',
  /** Cached results are taken; none is written. */
  'read',
  /** Every task executes; nothing is read or written. */
  'off',
] as const;
export type CacheMode = (typeof kCacheModes)[number];

/** Parses `--cache on|read|off` into the option's value. */
function parseCacheMode(text: string): boolean | 'read' {
  if (text === 'on') return true;
  if (text === 'off') return false;
  if (text === 'read') return 'read';
  throw new WaveError('USAGE', `Expected \`--cache\` to be on, read or off, got \`${text}\``);
}

/** The cache mode of an option value (true, 'read' or false). */
export function cacheModeOf(value: boolean | 'read' | undefined): CacheMode {
  return value === false ? 'off' : value === 'read' ? 'read' : 'on';
}

/** Stop starting tasks after N failures (`count`) or N% of the run's tasks (`percent`). */
const haltType = z.union([z.object({ count: positiveInteger }).strict(), z.object({ percent: z.number().gt(0).max(100) }).strict()]);

/** Parses `--halt fail=N` or `fail=N%` (the bounds are the table's, checked after). */
export function parseHalt(text: string): z.output<typeof haltType> {
  const match = /^fail=(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  if (!match) throw new WaveError('USAGE', `Expected \`--halt\` to be fail=N or fail=N%, got \`${text}\``);
  return match[2] === '%' ? { percent: Number(match[1]) } : { count: Number(match[1]) };
}

/**
 * The run options, by their library name (`RunOptions`' fields). Order is the order of
 * the flags in `--help` and of the rows in docs/options.md.
 */
export const kRunOptionTable = {
  concurrency: option({
    flag: '--concurrency <n>',
    key: 'concurrency',
    type: positiveInteger,
    what: 'a positive integer',
    defaultText: 'number of cores; with --executor openai, the endpoint concurrency; with --batch, 50000',
    doc: 'csv-wave tasks running at once',
    commands: kRunCommands,
  }),
  threads: option({
    flag: '--threads <n>',
    type: positiveInteger,
    what: 'a positive integer',
    defaultText: '1 for model and agent calls, min(concurrency, cores) for modules',
    doc: 'worker threads of modules, model and agent calls (tasks that wait share them); commands use none, they start from a launcher process',
    commands: kRunCommands,
  }),
  schedule: option({
    flag: '--schedule <kind>',
    key: 'schedule',
    type: z.enum(['waves', 'eager']),
    what: '`waves` or `eager`',
    fromText: 'none',
    choices: ['waves', 'eager'],
    default: 'waves',
    defaultText: 'waves',
    doc: 'waves: wave after wave; eager: each task once its deps are done',
    commands: kRunCommands,
  }),
  timeoutSeconds: option({
    flag: '--timeout <seconds>',
    key: 'timeout',
    type: timerSeconds,
    what: kTimerSecondsText,
    default: 0,
    defaultText: '0 (none)',
    doc: 'kill an attempt after this long, with its whole process tree; 0 for no limit',
    commands: kRunCommands,
  }),
  retries: option({
    flag: '--retries <n>',
    key: 'retries',
    type: z.number().int().min(0),
    what: 'an integer ≥ 0',
    default: 2,
    defaultText: '2',
    doc: 'extra attempts for rate-limited, transient and timed-out failures',
    commands: kRunCommands,
  }),
  retryBaseMs: option({
    flag: '--retry-delay <seconds>',
    type: z.number().min(0),
    what: 'a number of milliseconds ≥ 0',
    fromText: { scale: 1000, what: 'a number of seconds ≥ 0' },
    default: 1000,
    defaultText: '1 s (1000 ms)',
    doc: 'first retry delay, doubled each attempt, with jitter, capped at 60 s',
    commands: kRunCommands,
  }),
  halt: option({
    flag: '--halt <fail=N|fail=N%>',
    type: haltType,
    what: 'fail=N (N ≥ 1) or fail=N% (0 < N ≤ 100)',
    fromText: parseHalt,
    defaultText: 'none',
    doc: 'stop starting tasks once N (or N%) tasks failed for non-transient reasons',
    commands: kRunCommands,
  }),
  graceSeconds: option({
    flag: '--grace <seconds>',
    type: timerSeconds,
    what: kTimerSecondsText,
    default: 30,
    defaultText: '30',
    doc: 'after Ctrl-C or SIGTERM, how long running tasks may finish before they are killed and put back to pending',
    commands: kRunCommands,
  }),
  output: option({
    flag: '--output <mode>',
    key: 'output',
    type: z.enum(kOutputModes),
    what: '`auto`, `result` or `text`',
    fromText: 'none',
    choices: kOutputModes,
    default: 'auto',
    defaultText: 'auto',
    doc: "how a command's stdout becomes its result: auto (a JSON object with status or findings is the result, anything else text), result (must be a result object), text (always findings)",
    commands: kRunCommands,
  }),
  workdir: option({
    flag: '--workdir <mode>',
    key: 'workdir',
    type: z.enum(kWorkdirModes),
    what: '`session`, `task` or `worktree`',
    fromText: 'none',
    choices: kWorkdirModes,
    default: 'session',
    defaultText: 'session',
    doc: 'where a command or agent task works: session (the session folder), task (workdirs/<id>, emptied for each attempt) or worktree (a git worktree per task on the branch csv-wave/<session id>/<id>; its changes become artifacts/<id>/changes.patch)',
    commands: kRunCommands,
  }),
  base: option({
    flag: '--base <ref>',
    key: 'base',
    type: z.string().min(1),
    what: 'a git revision (a branch, tag or commit)',
    fromText: 'none',
    defaultText: 'HEAD when the run starts',
    doc: 'with --workdir worktree: the commit every task\'s worktree starts from, resolved once when the run starts',
    commands: kRunCommands,
  }),
  keepWorktrees: option({
    flag: '--keep-worktrees',
    key: 'keep_worktrees',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    default: false,
    defaultText: 'off (removed once the task\'s changes are on its branch)',
    doc: 'with --workdir worktree: keep each task\'s worktree after it ran (locked, so that no later run removes it; `git worktree unlock` then `git worktree remove` to drop one)',
    commands: kRunCommands,
  }),
  cache: option({
    flag: '--cache <mode>',
    negation: '--no-cache',
    key: 'cache',
    type: z.union([z.boolean(), z.literal('read')]),
    what: 'true, false or "read"',
    fromText: parseCacheMode,
    choices: kCacheModes,
    default: true,
    defaultText: 'on',
    doc: 'the result cache (docs/cache.md): on, a task whose inputs are unchanged since a completed run takes that result without executing; read, take results but write none; off (or --no-cache, or "cache": false), execute every task',
    commands: kRunCommands,
  }),
  bom: option({
    flag: '--bom',
    key: 'bom',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    defaultText: 'as the file was read',
    doc: 'write tasks.csv with a UTF-8 byte order mark',
    commands: kRunCommands,
  }),
  endpointConcurrency: option({
    flag: '--endpoint-concurrency <n>',
    type: positiveInteger,
    what: 'a positive integer',
    default: 8,
    defaultText: '8',
    doc: 'with --executor openai: requests in flight at once to the model server, whatever the concurrency',
    commands: kRunCommands,
  }),
  maxTokens: option({
    flag: '--max-tokens <n>',
    type: positiveInteger,
    what: 'a positive integer (tokens)',
    defaultText: "the server's",
    doc: 'with --executor openai: tokens of one answer at most (max_completion_tokens, or max_tokens for servers that know only it)',
    commands: kRunCommands,
  }),
  contextWindow: option({
    flag: '--context-window <n>',
    type: z.number().int().min(256),
    what: 'an integer ≥ 256 (tokens)',
    defaultText: "learned from the server's 400",
    doc: "with --executor openai: the model's context in tokens; longer prompts have their digests, then prev_context, cut",
    commands: kRunCommands,
  }),
  maxCostUsd: option({
    flag: '--max-cost <usd>',
    type: z.number().gt(0),
    what: 'a positive number of US dollars',
    defaultText: 'none',
    doc: "with --executor openai, codex or claude: stop starting tasks once the session's model calls cost this many US dollars (needs the model's price, but for claude, which reports its cost; a claude attempt gets what is left as --max-budget-usd)",
    commands: kRunCommands,
  }),
  maxTokensTotal: option({
    flag: '--max-tokens-total <n>',
    type: positiveInteger,
    what: 'a positive integer (tokens)',
    defaultText: 'none',
    doc: "with --executor openai, codex or claude: stop starting tasks once the session's model calls spent this many tokens",
    commands: kRunCommands,
  }),
  batch: option({
    flag: '--batch',
    key: 'batch',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    default: false,
    defaultText: 'off',
    doc: "with --executor openai: send the model tasks through OpenAI's Batch API, one batch per wave (answers within 24h, at the Batch API's price)",
    commands: kRunCommands,
  }),
  batchRepair: option({
    flag: '--batch-repair <mode>',
    key: 'batch_repair',
    type: z.enum(kBatchRepairModes),
    what: '`batch` or `sync`',
    fromText: 'none',
    choices: kBatchRepairModes,
    default: 'batch',
    defaultText: 'batch',
    doc: 'with --batch: a bad answer is repaired in the next batch (batch) or at once, synchronously (sync)',
    commands: kRunCommands,
  }),
  cancelBatch: option({
    flag: '--cancel-batch',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    default: false,
    defaultText: 'off',
    doc: 'with --batch: Ctrl-C or SIGTERM also cancels the running batches (else they run on, and a resume collects them)',
    commands: kRunCommands,
  }),
  batchPollSeconds: option({
    flag: '--batch-poll <seconds>',
    type: z.number().gt(0).max(kMaxTimerSeconds),
    what: `a number of seconds above 0, at most ${kMaxTimerSeconds}`,
    default: 60,
    defaultText: '60',
    doc: 'with --batch: the longest wait between two polls of a batch',
    commands: kRunCommands,
  }),
  prevContextCap: option({
    key: 'prev_context_cap',
    type: z.number().int().min(200),
    what: 'an integer ≥ 200',
    default: 16_000,
    defaultText: '16000',
    doc: 'characters of prev_context before it is cut with a marker',
    commands: [],
  }),
  discoveryFiles: option({
    key: 'discovery_files',
    type: z.enum(kDiscoveryFilePolicies),
    what: '`always` or `when-rich`',
    defaultText: 'when-rich for the generic pipeline, always for brainstorm and analyze',
    doc: 'which finished tasks get discoveries/<id>.json: every one, or only those whose result holds more than their row',
    commands: [],
  }),
  maxStdoutBytes: option({
    key: 'max_stdout_bytes',
    type: byteCap,
    what: 'an integer ≥ 1024 (bytes)',
    default: 1024 * 1024,
    defaultText: '1048576 (1 MiB)',
    doc: "bytes of a command's stdout kept per attempt; the findings say how many were dropped",
    commands: [],
  }),
  maxArtifactsPerTask: option({
    key: 'max_artifacts_per_task',
    type: positiveInteger,
    what: 'a positive integer',
    default: 20,
    defaultText: '20',
    doc: "artifact files one task may write, its findings' output.md included; further ones are dropped, said in its findings",
    commands: [],
  }),
  maxArtifactBytes: option({
    key: 'max_artifact_bytes',
    type: byteCap,
    what: 'an integer ≥ 1024 (bytes)',
    default: 10 * 1024 * 1024,
    defaultText: '10485760 (10 MiB)',
    doc: 'bytes of artifacts one task may write, all files together; past it they are dropped, said in its findings',
    commands: [],
  }),
  maxDiscoveryLineBytes: option({
    key: 'max_discovery_line_bytes',
    type: byteCap,
    what: 'an integer ≥ 1024 (bytes)',
    default: 64 * 1024,
    defaultText: '65536 (64 KiB)',
    doc: 'bytes of one line of discoveries.ndjson; a larger discovery is dropped with a warning naming its task',
    commands: [],
  }),
  workerMemoryMb: option({
    type: positiveInteger,
    what: 'a positive integer',
    default: 1024,
    defaultText: '1024',
    doc: 'heap limit of a worker thread in MB',
    commands: [],
  }),
} as const;

export type RunOptionName = keyof typeof kRunOptionTable;

/** The type of an option's value, from its definition's zod type. */
export type OptionValue<D> = D extends { type: infer S extends z.ZodType } ? z.output<S> : never;

/** The run options of the table, each optional, typed from their definitions. */
export type TableRunOptions = { -readonly [K in RunOptionName]?: OptionValue<(typeof kRunOptionTable)[K]> };

/** Every option of the table, in order. */
export function runOptionEntries(): Array<[RunOptionName, OptionDefinition]> {
  return Object.entries(kRunOptionTable) as Array<[RunOptionName, OptionDefinition]>;
}

/** The table's defaults by name, for the modules below that fall back on them when used alone. */
export const kRunDefaults = {
  maxStdoutBytes: kRunOptionTable.maxStdoutBytes.default!,
  maxArtifactsPerTask: kRunOptionTable.maxArtifactsPerTask.default!,
  maxArtifactBytes: kRunOptionTable.maxArtifactBytes.default!,
  maxDiscoveryLineBytes: kRunOptionTable.maxDiscoveryLineBytes.default!,
  graceSeconds: kRunOptionTable.graceSeconds.default!,
  prevContextCap: kRunOptionTable.prevContextCap.default!,
  batchPollSeconds: kRunOptionTable.batchPollSeconds.default!,
} as const;

/*
 * The backend's, the worker's and status's flags. They are not run options (no RunOptions field, no
 * session.json key of the table: session.json's `backend` is an object its backend reads),
 * so they have a table of their own, of the same definitions: their commander options and
 * help, their defaults and their checks come from it, and so do docs/options.md's and
 * docs/many-machines.md's flag tables.
 */

/** Attempts started per `durationMs` across every worker of a session (`--rate N/s|N/min`). */
export interface RateLimit {
  max: number;
  durationMs: number;
}

const kRateUnits: Record<string, number> = { s: 1000, sec: 1000, min: 60_000 };

/** Parses `N/s` or `N/min` (N a positive integer); a WaveError USAGE naming `flag` otherwise. */
export function parseRate(text: string, flag: string): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(s|sec|min)\s*$/.exec(text);
  const max = Number(match?.[1]);
  const durationMs = kRateUnits[match?.[2] ?? ''];
  if (!match || !Number.isSafeInteger(max) || max < 1 || durationMs === undefined) {
    throw new WaveError('USAGE', `Expected \`${flag}\` to be attempts per second or per minute, as 20/s or 600/min, got \`${text}\``);
  }
  return { max, durationMs };
}

/** What a session id may hold: what a task id may hold, so that it names a BullMQ queue and job safely. */
export const kSessionIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The agent CLIs a worker may offer (`--executors codex,claude`): never by default, as each
 * runs a program with tools on the worker's machine, checked as a run checks it when the
 * worker starts (job-admission.ts judges their jobs' settings, the same rules for each).
 */
export const kWorkerAgentTypes = ['codex', 'claude'] as const;

/** The executors a worker may offer (`--executors`). */
export const kWorkerExecutorTypes = ['command', 'module', 'openai', ...kWorkerAgentTypes] as const;

/** The executors a worker offers without `--executors`: all but the agents. */
export const kWorkerDefaultExecutors = ['command', 'module', 'openai'] as const satisfies readonly (typeof kWorkerExecutorTypes)[number][];

/**
 * The sandboxes an agent job may ask a worker for (codex `-s`, claude's edit tools;
 * schema/session.ts kCodexSandboxes). read-only is always allowed.
 */
export const kWorkerSandboxes = ['read-only', 'workspace-write'] as const;

/** Parses `--executors a,b` into its names (checked against kWorkerExecutorTypes by the type). */
function parseList(text: string): string[] {
  return text.split(',').map((part) => part.trim());
}

/** The model server the openai SDK talks to when none is given. */
export const kOfficialBaseUrl = 'https://api.openai.com/v1';

/** The Messages-API server claude talks to when neither the job nor ANTHROPIC_BASE_URL names one. */
export const kAnthropicBaseUrl = 'https://api.anthropic.com';

/** Seconds a timer waits, above 0 (a Redis timeout, BullMQ's stalled check). */
const positiveTimerSeconds = z.number().gt(0).max(kMaxTimerSeconds);
const kPositiveTimerSecondsText = `a positive number of seconds, at most ${kMaxTimerSeconds} (24 days)`;

/**
 * The flags of the backends, of `csv-wave worker` and of `csv-wave status`, by the name the code knows them by.
 * Order is the order of the rows in docs/options.md and docs/many-machines.md.
 */
export const kFlagOptionTable = {
  backend: option({
    flag: '--backend <type>',
    type: z.enum(['local', 'bullmq']),
    what: '`local` or `bullmq`',
    fromText: 'none',
    choices: ['local', 'bullmq'],
    default: 'local',
    defaultText: "local, or session.json's backend",
    doc: 'where tasks run: local (this machine) or bullmq (workers on any machine, through Redis)',
    commands: kRunCommands,
  }),
  redis: option({
    flag: '--redis <url>',
    type: z.string().min(1),
    what: 'a Redis URL',
    fromText: 'none',
    defaultText: 'CSV_WAVE_REDIS_URL',
    doc: 'with --backend bullmq: the Redis URL, redis://[:password@]host:port[/db] (a password in it is masked in every message)',
    commands: kRunCommands,
  }),
  rate: option({
    flag: '--rate <n/unit>',
    type: z.object({ max: positiveInteger, durationMs: positiveInteger }) satisfies z.ZodType<RateLimit>,
    what: 'attempts per second or per minute, as 20/s or 600/min',
    fromText: (text) => parseRate(text, '--rate'),
    defaultText: 'no limit',
    doc: 'with --backend bullmq: attempts started per second or minute across all workers, as 20/s or 600/min',
    commands: kRunCommands,
  }),
  redisTimeoutSeconds: option({
    flag: '--redis-timeout <seconds>',
    type: positiveTimerSeconds,
    what: kPositiveTimerSecondsText,
    default: 60,
    defaultText: '60',
    doc: 'with the bullmq backend: how long Redis may be away, or refuse writes (full at maxmemory), during a run before it stops (resumable, exit 1)',
    commands: kRunCommands,
  }),
  secretFile: option({
    flag: '--secret-file <path>',
    type: z.string().min(1),
    what: 'a path',
    fromText: 'none',
    defaultText: 'CSV_WAVE_SECRET',
    doc: 'with the bullmq backend: a file (chmod 600) holding the secret that coordinators and workers sign jobs and replies with (make one with `openssl rand -hex 32`)',
    commands: [...kRunCommands, 'worker'],
  }),
  insecureNoSecret: option({
    flag: '--insecure-no-secret',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    default: false,
    defaultText: 'off',
    doc: 'with the bullmq backend: run without a secret, jobs and replies unsigned: whoever can write to the Redis can then run commands on the workers (only for a Redis no one else reaches)',
    commands: [...kRunCommands, 'worker'],
  }),
  workerRedis: option({
    flag: '--redis <url>',
    type: z.string().min(1),
    what: 'a Redis URL',
    fromText: 'none',
    defaultText: 'CSV_WAVE_REDIS_URL',
    doc: 'the Redis URL, redis://[:password@]host:port[/db] (a password in it is masked in every message)',
    commands: ['worker'],
  }),
  sessionId: option({
    flag: '--session-id <id>',
    type: z.string().regex(kSessionIdPattern),
    what: "a session id (letters, digits, . _ -): the session's .csv-wave/session-id",
    fromText: 'none',
    defaultText: 'every running session',
    doc: 'serve only this session (its .csv-wave/session-id, printed by the run)',
    commands: ['worker'],
  }),
  workerConcurrency: option({
    flag: '--concurrency <n>',
    type: positiveInteger,
    what: 'a positive integer',
    default: 1,
    defaultText: '1',
    doc: 'jobs at once, per session served',
    commands: ['worker'],
  }),
  stalledIntervalSeconds: option({
    flag: '--stalled-interval <seconds>',
    type: positiveTimerSeconds,
    what: kPositiveTimerSecondsText,
    default: 30,
    defaultText: '30',
    doc: 'how often to look for jobs whose worker died and give them to another',
    commands: ['worker'],
  }),
  workdir: option({
    flag: '--workdir <dir>',
    type: z.string().min(1),
    what: 'a folder',
    fromText: 'none',
    defaultText: 'a fresh temporary folder per job',
    doc: 'where command tasks run',
    commands: ['worker'],
  }),
  executors: option({
    flag: '--executors <list>',
    type: z.array(z.enum(kWorkerExecutorTypes)).min(1),
    what: `a comma-separated list of ${kWorkerExecutorTypes.join(', ')}`,
    fromText: parseList,
    default: [...kWorkerDefaultExecutors],
    defaultText: kWorkerDefaultExecutors.join(','),
    doc: `the executors this worker runs, comma-separated: ${kWorkerExecutorTypes.join(', ')}; a job of another is refused; an agent (${kWorkerAgentTypes.join(', ')}) runs only when named here, and its CLI is checked when the worker starts`,
    commands: ['worker'],
  }),
  allowBaseUrls: option({
    flag: '--allow-base-url <url>',
    type: z.array(z.string()),
    what: 'an http(s) URL without a user or password',
    fromText: 'none',
    repeatable: true,
    defaultText: `openai and codex jobs: OPENAI_BASE_URL, else ${kOfficialBaseUrl}; claude jobs: ANTHROPIC_BASE_URL, else ${kAnthropicBaseUrl}`,
    doc:
      "a model server jobs may send this worker's key to (OPENAI_API_KEY for openai and codex jobs, ANTHROPIC_API_KEY for claude's); repeat for more; " +
      "given, the list holds for every key; a job naming another is refused (an agent job naming none uses the CLI's own configuration)",
    commands: ['worker'],
  }),
  allowSandboxes: option({
    flag: '--allow-sandbox <mode>',
    // Each value is checked by the worker (cli/commands/worker.ts), naming the flag: a list's type gives no such message.
    type: z.array(z.string()),
    what: kWorkerSandboxes.join(' or '),
    fromText: 'none',
    repeatable: true,
    defaultText: 'read-only only',
    doc: "a sandbox agent jobs may run in besides read-only (workspace-write: the agent may write in its job folder, codex's -s, claude's edit tools); a job asking for another is refused",
    commands: ['worker'],
  }),
  allowAgentArgs: option({
    flag: '--allow-agent-args',
    type: z.boolean(),
    what: 'true or false',
    fromText: 'none',
    default: false,
    defaultText: 'off',
    doc:
      "run agent jobs whose settings add CLI arguments (args) or tools (allowed_tools), or more turns than claude's default (max_turns): " +
      "these can widen the agent's sandbox, so only where a signed job is trusted as a command is; off, such a job is refused",
    commands: ['worker'],
  }),
  maxSessions: option({
    flag: '--max-sessions <n>',
    type: positiveInteger,
    what: 'a positive integer',
    default: 16,
    defaultText: '16',
    doc: 'without --session-id: the running sessions served at once at most, the most recently beaten',
    commands: ['worker'],
  }),
  statusRedis: option({
    flag: '--redis <url>',
    // Not min(1): an empty URL asks no Redis (redisUrlFrom), as status always took it.
    type: z.string(),
    what: 'a Redis URL',
    fromText: 'none',
    defaultText: "session.json's backend url, else CSV_WAVE_REDIS_URL",
    doc: 'a session running with --backend bullmq: the Redis to ask which worker runs each task',
    commands: ['status'],
  }),
} as const;

export type FlagOptionName = keyof typeof kFlagOptionTable;

/** Every backend, worker and status flag of the table, in order. */
export function flagOptionEntries(): Array<[FlagOptionName, OptionDefinition]> {
  return Object.entries(kFlagOptionTable) as Array<[FlagOptionName, OptionDefinition]>;
}

/** The backend's and the worker's defaults by name, for the modules below that fall back on them. */
export const kFlagDefaults = {
  redisTimeoutSeconds: kFlagOptionTable.redisTimeoutSeconds.default!,
  workerConcurrency: kFlagOptionTable.workerConcurrency.default!,
  maxSessions: kFlagOptionTable.maxSessions.default!,
  stalledIntervalSeconds: kFlagOptionTable.stalledIntervalSeconds.default!,
} as const;
