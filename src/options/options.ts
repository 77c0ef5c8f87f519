import { availableParallelism } from 'node:os';
import { WaveError } from '../errors.js';
import type { ExecutorSpec } from '../executors/messages.js';
import type { DiscoveryFilePolicy } from '../knowledge/discovery-files.js';
import type { SessionConfig } from '../schema/session.js';
import type { HaltPolicy } from '../core/core-options.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { kMaxBatchRequests } from '../backend/openai-batch/batch-limits.js';
import { modelOptions, type ModelPriceOptions } from './model-options.js';
import { runExecutor, withOutputMode, type ExecutorOption } from './executor-option.js';
import { checkOption } from './option-check.js';
import { kRunDefaults, runOptionEntries, type TableRunOptions } from '../option-table.js';

/** The core's halt policy, part of the run options. */
export type { HaltPolicy };
export type { ExecutorOption };
export { parseHalt } from '../option-table.js';

/**
 * How a run goes. Every field has a default (docs/options.md lists them with their
 * session.json keys and flags, from the table in option-table.ts); `normalizeRunOptions`
 * checks them all.
 */
export interface RunOptions extends TableRunOptions, ModelPriceOptions {
  /** What runs each task. Required unless session.json names an executor. */
  executor?: ExecutorOption;
}

/** The run options as the run takes them: every default filled in. */
export type NormalizedRunOptions = Required<
  Omit<RunOptions, 'halt' | 'bom' | 'executor' | 'discoveryFiles' | 'output' | 'maxTokens' | 'contextWindow' | 'maxCostUsd' | 'maxTokensTotal' | 'pricing' | 'price' | 'base'>
> &
  Pick<RunOptions, 'halt' | 'bom' | 'maxCostUsd' | 'maxTokensTotal' | 'base'> & {
    executor: ExecutorSpec;
    /** Prices by model, the run model's flags merged in. */
    pricing: PriceTable;
    /** Absent: the pipeline decides, once it is settled from the roles. */
    discoveryFiles?: DiscoveryFilePolicy;
  };

/** What normalizeRunOptions reads of the session: session.json, and the folder a relative path is relative to. */
export interface OptionSession {
  config: SessionConfig;
  dir: string;
}

/** Seconds running tasks get to finish after a stop signal before they are killed. */
export const kDefaultGraceSeconds = kRunDefaults.graceSeconds;

/**
 * The run options: the caller's (the CLI's flags, already checked as flags) over
 * session.json's (checked by its schema, at the line of their key) over the table's
 * defaults. A caller's value is checked here against the table, named as the library
 * names it; then the rules between options.
 */
export function normalizeRunOptions(options: RunOptions, session?: OptionSession): NormalizedRunOptions {
  const config: SessionConfig = session?.config ?? {};
  const fromFile = config as Record<string, unknown>;
  // What the caller or session.json named, then with the defaults.
  const named: Record<string, unknown> = {};
  const filled: Record<string, unknown> = {};
  for (const [name, definition] of runOptionEntries()) {
    const given = options[name];
    named[name] = given !== undefined ? checkOption(definition, given, name) : definition.key === undefined ? undefined : fromFile[definition.key];
    filled[name] = named[name] ?? definition.default;
  }
  const chosen = filled as TableRunOptions;
  // A command's output mode is set only when named: the executor's own default is the same.
  const executor = withOutputMode(runExecutor(options.executor, config, session?.dir), (named as TableRunOptions).output);
  const batch = chosen.batch!;
  checkBatch(named as TableRunOptions, batch, executor);
  // Model calls wait on the server, not on this machine's cores: as many tasks as requests
  // may be in flight, else the endpoint limit could never be reached (issue 15).
  // A batch takes what the scheduler hands out together: a wave is one batch, not one per core.
  const concurrency =
    chosen.concurrency ?? (batch ? kMaxBatchRequests : executor.type === 'openai' ? chosen.endpointConcurrency! : availableParallelism());
  // Commands and model calls wait on other processes: one thread runs them all, and a
  // smaller process forks faster (5,000 commands ran 10% faster on 1 thread than on 2).
  const threads = chosen.threads ?? (executor.type !== 'module' ? 1 : Math.min(concurrency, availableParallelism()));
  const pricing = options.pricing ?? config.pricing;
  const model = modelOptions({ ...chosen, ...(pricing === undefined ? {} : { pricing }), ...(options.price === undefined ? {} : { price: options.price }) }, executor);
  const { halt, bom, discoveryFiles, maxCostUsd, maxTokensTotal, base } = chosen;
  checkWorkdir(named as TableRunOptions, chosen.workdir!, executor);
  return {
    executor: model.executor,
    pricing: model.pricing,
    ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
    ...(maxTokensTotal === undefined ? {} : { maxTokensTotal }),
    concurrency,
    threads,
    schedule: chosen.schedule!,
    timeoutSeconds: chosen.timeoutSeconds!,
    retries: chosen.retries!,
    retryBaseMs: chosen.retryBaseMs!,
    prevContextCap: chosen.prevContextCap!,
    workerMemoryMb: chosen.workerMemoryMb!,
    endpointConcurrency: chosen.endpointConcurrency!,
    graceSeconds: chosen.graceSeconds!,
    maxStdoutBytes: chosen.maxStdoutBytes!,
    maxArtifactsPerTask: chosen.maxArtifactsPerTask!,
    maxArtifactBytes: chosen.maxArtifactBytes!,
    maxDiscoveryLineBytes: chosen.maxDiscoveryLineBytes!,
    batch,
    batchRepair: chosen.batchRepair!,
    cancelBatch: chosen.cancelBatch!,
    batchPollSeconds: chosen.batchPollSeconds!,
    workdir: chosen.workdir!,
    keepWorktrees: chosen.keepWorktrees!,
    cache: chosen.cache!,
    ...(base === undefined ? {} : { base }),
    ...(halt ? { halt: halt as HaltPolicy } : {}),
    ...(bom === undefined ? {} : { bom }),
    ...(discoveryFiles === undefined ? {} : { discoveryFiles }),
  };
}

/**
 * A working folder of its own is for tasks that work in a folder: commands (their cwd) and
 * agents (their -C); --base and --keep-worktrees go with worktrees.
 */
function checkWorkdir(named: TableRunOptions, workdir: string, executor: ExecutorSpec): void {
  if (workdir !== 'session' && (executor.type === 'module' || executor.type === 'openai')) {
    throw new WaveError(
      'USAGE',
      `\`workdir\` ${workdir} (--workdir) gives each task a folder to work in: it goes with --cmd, --executor codex or --executor claude, not a ${executor.type} executor`,
    );
  }
  if (workdir !== 'worktree') {
    if (named.base !== undefined) throw new WaveError('USAGE', '`base` (--base) is the commit of the tasks\' worktrees: add --workdir worktree');
    if (named.keepWorktrees === true) throw new WaveError('USAGE', '`keepWorktrees` (--keep-worktrees) keeps the tasks\' worktrees: add --workdir worktree');
  }
}

/** The batch mode's options go with the openai executor and with each other. */
function checkBatch(named: TableRunOptions, batch: boolean, executor: ExecutorSpec): void {
  if (batch && executor.type !== 'openai') {
    throw new WaveError('USAGE', `\`batch\` (--batch) sends model calls through OpenAI's Batch API: it needs --executor openai --model NAME, not a ${executor.type} executor`);
  }
  const given = [
    ['batchRepair', '--batch-repair', named.batchRepair],
    ['cancelBatch', '--cancel-batch', named.cancelBatch],
    ['batchPollSeconds', '--batch-poll', named.batchPollSeconds],
  ] as const;
  for (const [name, flag, value] of given) {
    if (value !== undefined && !batch) throw new WaveError('USAGE', `\`${name}\` (${flag}) goes with batch mode: add --batch (or "batch": true in session.json)`);
  }
}
