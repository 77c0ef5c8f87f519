import { availableParallelism } from 'node:os';
import { WaveError } from '../errors.js';
import { kDefaultMaxStdoutBytes } from '../executors/command.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { kDefaultPrevContextCap } from '../graph/prev-context.js';
import { kDefaultArtifactLimits } from '../knowledge/artifacts.js';
import { kMaxTimerSeconds } from '../schema/timer-range.js';
import { kDefaultMaxDiscoveryLineBytes } from '../knowledge/discoveries-board.js';
import type { DiscoveryFilePolicy } from '../knowledge/discovery-files.js';
import { kOutputModes, type OutputMode } from '../schema/session.js';
import type { HaltPolicy } from '../core/core-options.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { modelOptions, type ModelRunOptions } from './model-options.js';
import { kBatchRepairModes, kDefaultBatchPollSeconds, kMaxBatchRequests, type BatchRepair } from '../backend/openai-batch/batch-limits.js';

/** The core's halt policy, part of the run options. */
export type { HaltPolicy };

/**
 * What runs each task, as a caller names it. A command's template is `cmd`, as in
 * session.json and `--cmd`; `template`, its name before, is still accepted.
 */
export type ExecutorOption =
  | { type: 'command'; cmd: string }
  /** @deprecated the same as `cmd`, its old name. */
  | { type: 'command'; template: string }
  | Exclude<ExecutorSpec, { type: 'command' }>;

/** How a run goes. Every field has a default; `normalizeRunOptions` checks them all. */
export interface RunOptions extends ModelRunOptions {
  /** What runs each task. Required unless session.json names an executor. */
  executor?: ExecutorOption;
  /**
   * How a command's stdout becomes its result: `auto` takes a JSON object with a `status`
   * or `findings` key as the result and anything else as text; `result` requires a result
   * object; `text` takes stdout as the findings whatever it looks like. Commands only.
   * session.json: `output`.
   * @default 'auto'
   */
  output?: OutputMode;
  /**
   * csv-wave tasks running at once.
   * @default the number of cores; with the openai executor, `endpointConcurrency`
   */
  concurrency?: number;
  /**
   * Worker threads. Tasks that wait (commands, model calls) share threads, so 256 tasks
   * need only a few.
   * @default 1 for commands and model calls; min(concurrency, cores) for modules
   */
  threads?: number;
  /**
   * `waves`: a wave starts when the previous one is done. `eager`: a task starts as soon as
   * its own dependencies are done.
   * @default 'waves'
   */
  schedule?: 'waves' | 'eager';
  /**
   * Seconds before an attempt is killed; 0 for no limit. At most 2073600 (24 days): Node's
   * timers cannot wait longer.
   * @default 0
   */
  timeoutSeconds?: number;
  /**
   * Extra attempts for rate-limited, transient and timed-out failures.
   * @default 2
   */
  retries?: number;
  /**
   * First retry delay in milliseconds; doubles each attempt, with jitter, capped at 60 s.
   * @default 1000
   */
  retryBaseMs?: number;
  /** Stop starting tasks once this many failed for non-transient reasons. @default none */
  halt?: HaltPolicy;
  /**
   * Characters of prev_context before it is cut with a marker.
   * @default 16000
   */
  prevContextCap?: number;
  /**
   * Heap limit of a worker thread in MB.
   * @default 1024
   */
  workerMemoryMb?: number;
  /**
   * Seconds the running tasks get to finish after a stop by signal (the CLI's first
   * Ctrl-C). Then they are killed (a command with its whole process group, a module or
   * model call with its worker thread) and put back to pending, and the run ends. At most
   * 2073600 (24 days).
   * @default 30
   */
  graceSeconds?: number;
  /** Write tasks.csv with a UTF-8 BOM. @default as the file was */
  bom?: boolean;
  /**
   * Model requests in flight at once to one endpoint (the openai executor), whatever the
   * concurrency: local servers serve a few at a time, hosted ones limit rates.
   * @default 8
   */
  endpointConcurrency?: number;
  /**
   * Which finished tasks get `discoveries/<id>.json`: every one, or only those whose
   * result holds more than their row (see DiscoveryFilePolicy).
   * @default 'when-rich' for the generic pipeline, 'always' for brainstorm and analyze
   */
  discoveryFiles?: DiscoveryFilePolicy;
  /**
   * Bytes of a command's stdout kept per attempt. The rest is read and dropped; the kept
   * head is the findings (whole in `artifacts/<id>/output.md`), which end with a note
   * saying how many bytes were dropped. session.json: `max_stdout_bytes`.
   * @default 1048576 (1 MiB)
   */
  maxStdoutBytes?: number;
  /**
   * Artifact files one task may write, its findings' `<id>/output.md` included; further
   * ones are dropped, and its findings say which. session.json: `max_artifacts_per_task`.
   * @default 20
   */
  maxArtifactsPerTask?: number;
  /**
   * Bytes of artifacts one task may write, all files together; an artifact that would pass
   * it is dropped (findings are cut instead), and the findings say so.
   * session.json: `max_artifact_bytes`.
   * @default 10485760 (10 MiB)
   */
  maxArtifactBytes?: number;
  /**
   * Bytes of one line of discoveries.ndjson; a larger discovery is dropped with a warning
   * naming its task. session.json: `max_discovery_line_bytes`.
   * @default 65536 (64 KiB)
   */
  maxDiscoveryLineBytes?: number;
  /**
   * Send the model tasks through OpenAI's Batch API (the openai executor only): the tasks
   * a wave hands out (with eager, those ready together) become one batch, answered within
   * 24 hours at the Batch API's price. session.json: `batch`.
   * @default false
   */
  batch?: boolean;
  /** Batch mode: a bad answer's repair goes into the next batch, or at once as a synchronous call. session.json: `batch_repair`. @default 'batch' */
  batchRepair?: BatchRepair;
  /** Batch mode: a run stopped by a signal cancels its batches (else they run on, and a resume re-attaches). @default false */
  cancelBatch?: boolean;
  /** Batch mode: the longest wait, in seconds, between two polls of a batch. @default 60 */
  batchPollSeconds?: number;
}

export type NormalizedRunOptions = Required<
  Omit<
    RunOptions,
    'halt' | 'bom' | 'executor' | 'discoveryFiles' | 'output' | 'maxTokens' | 'contextWindow' | 'maxCostUsd' | 'maxTokensTotal' | 'pricing' | 'price'
  >
> &
  Pick<RunOptions, 'halt' | 'bom' | 'discoveryFiles' | 'maxCostUsd' | 'maxTokensTotal'> & {
    executor: ExecutorSpec;
    /** Prices by model, the run model's flags merged in. */
    pricing: PriceTable;
  };

/** Seconds running tasks get to finish after a stop signal before they are killed. */
export const kDefaultGraceSeconds = 30;

const kDefaults = {
  schedule: 'waves',
  timeoutSeconds: 0,
  retries: 2,
  retryBaseMs: 1000,
  prevContextCap: kDefaultPrevContextCap,
  workerMemoryMb: 1024,
  endpointConcurrency: 8,
  graceSeconds: kDefaultGraceSeconds,
  maxStdoutBytes: kDefaultMaxStdoutBytes,
  maxArtifactsPerTask: kDefaultArtifactLimits.maxFiles,
  maxArtifactBytes: kDefaultArtifactLimits.maxBytes,
  maxDiscoveryLineBytes: kDefaultMaxDiscoveryLineBytes,
} as const;

function expect(name: string, valid: boolean, value: unknown, what: string): void {
  if (!valid) {
    throw new WaveError('USAGE', `Expected \`${name}\` to be ${what}, got \`${String(value)}\` (${typeof value})`);
  }
}

const isPositiveInteger = (value: number) => Number.isInteger(value) && value > 0;
const isNonNegativeInteger = (value: number) => Number.isInteger(value) && value >= 0;
/** Byte caps start at 1 KiB: a smaller one is a unit mistake (megabytes meant), not a wish. */
/** Seconds a timer can wait (see kMaxTimerSeconds); 0 is allowed (no limit, or no grace). */
const isTimerSeconds = (value: number) => Number.isFinite(value) && value >= 0 && value <= kMaxTimerSeconds;
const kTimerSecondsText = `a number of seconds from 0 to ${kMaxTimerSeconds} (24 days)`;
const isByteCap = (value: number) => Number.isInteger(value) && value >= 1024;

/** The executor as the engine runs it: a command's `cmd` (or its old name `template`) becomes its template. */
function executorSpec(executor: ExecutorOption): ExecutorSpec {
  if (executor.type !== 'command') return executor;
  const given = executor as { cmd?: unknown; template?: unknown };
  if (given.cmd !== undefined && given.template !== undefined && given.cmd !== given.template) {
    throw new WaveError('USAGE', 'Pass `executor.cmd` only: `executor.template` is its old name, and the two differ');
  }
  const template = given.cmd ?? given.template;
  expect('executor.cmd', typeof template === 'string' && template.trim() !== '', template, 'a shell command template');
  return { type: 'command', template: template as string };
}

/** Fills the defaults and checks every option, with p-queue style messages. */
export function normalizeRunOptions(options: RunOptions): NormalizedRunOptions {
  if (!options.executor) {
    throw new WaveError(
      'USAGE',
      'No executor: pass --cmd TEMPLATE, --module PATH or --executor openai --model NAME, or name one in session.json ("executor": {"type": "command", "cmd": "..."})',
    );
  }
  const executor = withOutputMode(executorSpec(options.executor), options.output);
  const endpointConcurrency = options.endpointConcurrency ?? kDefaults.endpointConcurrency;
  expect('endpointConcurrency', isPositiveInteger(endpointConcurrency), endpointConcurrency, 'a positive integer');
  // Model calls wait on the server, not on this machine's cores: as many tasks as requests
  // may be in flight, else the endpoint limit could never be reached (issue 15).
  // A batch takes what the scheduler hands out together: a wave is one batch, not one per core.
  const concurrency =
    options.concurrency ?? (options.batch ? kMaxBatchRequests : executor.type === 'openai' ? endpointConcurrency : availableParallelism());
  expect('concurrency', isPositiveInteger(concurrency), concurrency, 'a positive integer');
  // Commands and model calls wait on other processes: one thread runs them all, and a
  // smaller process forks faster (5,000 commands ran 10% faster on 1 thread than on 2).
  const waits = executor.type !== 'module';
  const threads = options.threads ?? (waits ? 1 : Math.min(concurrency, availableParallelism()));
  expect('threads', isPositiveInteger(threads), threads, 'a positive integer');
  const schedule = options.schedule ?? kDefaults.schedule;
  expect('schedule', schedule === 'waves' || schedule === 'eager', schedule, '`waves` or `eager`');
  const timeoutSeconds = options.timeoutSeconds ?? kDefaults.timeoutSeconds;
  expect('timeout', isTimerSeconds(timeoutSeconds), timeoutSeconds, kTimerSecondsText);
  const retries = options.retries ?? kDefaults.retries;
  expect('retries', isNonNegativeInteger(retries), retries, 'an integer ≥ 0');
  const retryBaseMs = options.retryBaseMs ?? kDefaults.retryBaseMs;
  expect('retryBaseMs', Number.isFinite(retryBaseMs) && retryBaseMs >= 0, retryBaseMs, 'a number of milliseconds ≥ 0');
  const prevContextCap = options.prevContextCap ?? kDefaults.prevContextCap;
  expect('prevContextCap', Number.isInteger(prevContextCap) && prevContextCap >= 200, prevContextCap, 'an integer ≥ 200');
  const workerMemoryMb = options.workerMemoryMb ?? kDefaults.workerMemoryMb;
  expect('workerMemoryMb', isPositiveInteger(workerMemoryMb), workerMemoryMb, 'a positive integer');
  const graceSeconds = options.graceSeconds ?? kDefaults.graceSeconds;
  expect('grace', isTimerSeconds(graceSeconds), graceSeconds, kTimerSecondsText);
  const maxStdoutBytes = options.maxStdoutBytes ?? kDefaults.maxStdoutBytes;
  expect('maxStdoutBytes', isByteCap(maxStdoutBytes), maxStdoutBytes, 'an integer ≥ 1024 (bytes)');
  const maxArtifactsPerTask = options.maxArtifactsPerTask ?? kDefaults.maxArtifactsPerTask;
  expect('maxArtifactsPerTask', isPositiveInteger(maxArtifactsPerTask), maxArtifactsPerTask, 'a positive integer');
  const maxArtifactBytes = options.maxArtifactBytes ?? kDefaults.maxArtifactBytes;
  expect('maxArtifactBytes', isByteCap(maxArtifactBytes), maxArtifactBytes, 'an integer ≥ 1024 (bytes)');
  const maxDiscoveryLineBytes = options.maxDiscoveryLineBytes ?? kDefaults.maxDiscoveryLineBytes;
  expect('maxDiscoveryLineBytes', isByteCap(maxDiscoveryLineBytes), maxDiscoveryLineBytes, 'an integer ≥ 1024 (bytes)');
  const batch = checkBatch(options, executor);
  if (options.halt) {
    const value = 'count' in options.halt ? options.halt.count : options.halt.percent;
    const valid = 'count' in options.halt ? isPositiveInteger(value) : value > 0 && value <= 100;
    expect('halt', valid, value, 'fail=N (N ≥ 1) or fail=N% (0 < N ≤ 100)');
  }
  const model = modelOptions(options, executor);
  return {
    executor: model.executor,
    pricing: model.pricing,
    ...(options.maxCostUsd === undefined ? {} : { maxCostUsd: options.maxCostUsd }),
    ...(options.maxTokensTotal === undefined ? {} : { maxTokensTotal: options.maxTokensTotal }),
    concurrency,
    threads,
    schedule,
    timeoutSeconds,
    retries,
    retryBaseMs,
    prevContextCap,
    workerMemoryMb,
    endpointConcurrency,
    graceSeconds,
    maxStdoutBytes,
    maxArtifactsPerTask,
    maxArtifactBytes,
    maxDiscoveryLineBytes,
    ...batch,
    ...(options.halt ? { halt: options.halt } : {}),
    ...(options.bom === undefined ? {} : { bom: options.bom }),
    ...(options.discoveryFiles === undefined ? {} : { discoveryFiles: options.discoveryFiles }),
  };
}

/** The batch mode's options, checked: they go with the openai executor and with each other. */
function checkBatch(options: RunOptions, executor: ExecutorSpec): Pick<NormalizedRunOptions, 'batch' | 'batchRepair' | 'cancelBatch' | 'batchPollSeconds'> {
  const batch = options.batch ?? false;
  expect('batch', typeof batch === 'boolean', batch, 'true or false');
  if (batch && executor.type !== 'openai') {
    throw new WaveError('USAGE', `\`batch\` (--batch) sends model calls through OpenAI's Batch API: it needs --executor openai --model NAME, not a ${executor.type} executor`);
  }
  const given = [
    ['batchRepair', '--batch-repair', options.batchRepair],
    ['cancelBatch', '--cancel-batch', options.cancelBatch],
    ['batchPollSeconds', '--batch-poll', options.batchPollSeconds],
  ] as const;
  for (const [name, flag, value] of given) {
    if (value !== undefined && !batch) throw new WaveError('USAGE', `\`${name}\` (${flag}) goes with batch mode: add --batch (or "batch": true in session.json)`);
  }
  const batchRepair = options.batchRepair ?? 'batch';
  expect('batchRepair', (kBatchRepairModes as readonly string[]).includes(batchRepair), batchRepair, '`batch` or `sync`');
  const cancelBatch = options.cancelBatch ?? false;
  const batchPollSeconds = options.batchPollSeconds ?? kDefaultBatchPollSeconds;
  expect('batchPollSeconds', batchPollSeconds > 0 && isTimerSeconds(batchPollSeconds), batchPollSeconds, `a number of seconds above 0, at most ${kMaxTimerSeconds}`);
  return { batch, batchRepair, cancelBatch, batchPollSeconds };
}

/** The command executor with its output mode; other executors return objects, so a mode other than auto is a mistake there. */
function withOutputMode(executor: ExecutorSpec, output: OutputMode | undefined): ExecutorSpec {
  if (output === undefined) return executor;
  expect('output', (kOutputModes as readonly string[]).includes(output), output, '`auto`, `result` or `text`');
  if (executor.type === 'command') return { ...executor, output };
  if (output !== 'auto') {
    throw new WaveError('USAGE', `\`output\` (--output ${output}) is for commands (--cmd): a ${executor.type} executor returns a result object`);
  }
  return executor;
}

/** Parses `--halt fail=N` or `fail=N%`. */
export function parseHalt(text: string): HaltPolicy {
  const match = /^fail=(\d+(?:\.\d+)?)(%?)$/.exec(text.trim());
  if (!match) throw new WaveError('USAGE', `Expected \`--halt\` to be fail=N or fail=N%, got \`${text}\``);
  return match[2] === '%' ? { percent: Number(match[1]) } : { count: Number(match[1]) };
}
