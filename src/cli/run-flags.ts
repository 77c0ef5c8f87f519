import { Option, type Command } from 'commander';
import { WaveError } from '../errors.js';
import { parseHalt, type RunOptions } from '../options/options.js';
import { kOutputModes, type OutputMode, type PipelineName } from '../schema/session.js';
import { addPipelineFlag } from './pipeline-flag.js';
import { addBackendFlags, type BackendFlags } from './backend-flag.js';

/** The flags `run`, `resume` and `rerun` share, as commander hands them over. */
export interface RunFlags extends BackendFlags {
  cmd?: string;
  module?: string;
  executor?: string;
  concurrency?: string;
  threads?: string;
  timeout?: string;
  retries?: string;
  retryDelay?: string;
  schedule?: 'waves' | 'eager';
  halt?: string;
  bom?: boolean;
  json?: boolean;
  model?: string;
  baseUrl?: string;
  endpointConcurrency?: string;
  answers?: string;
  auto?: boolean;
  grace?: string;
  pipeline?: PipelineName;
  output?: OutputMode;
  maxTokens?: string;
  contextWindow?: string;
  maxCost?: string;
  maxTokensTotal?: string;
  priceInput?: string;
  priceOutput?: string;
  priceCached?: string;
  batch?: boolean;
  batchRepair?: string;
  cancelBatch?: boolean;
  batchPoll?: string;
}

export function addRunFlags(command: Command): Command {
  return addBackendFlags(addPipelineFlag(command))
    .option('--cmd <template>', "run each task as a shell command; {column} is replaced by the shell-quoted cell")
    .option('--module <path>', 'run each task with the default export of this JS module: async (task, ctx) => result')
    .addOption(
      new Option('--executor <type>', 'command (with --cmd), module (with --module) or openai (with --model)').choices([
        'command',
        'module',
        'openai',
      ]),
    )
    .option('--model <name>', 'with --executor openai: the model; the key comes from OPENAI_API_KEY')
    .option('--base-url <url>', 'with --executor openai: an OpenAI-compatible endpoint (default OPENAI_BASE_URL, else OpenAI)')
    .option('--endpoint-concurrency <n>', 'with --executor openai: requests in flight at once (default 8)')
    .option('--answers <file>', 'answers for the discussion gate: a JSON list, used in order')
    .option('--auto', 'answer every discussion gate with Done')
    .option('--concurrency <n>', 'csv-wave tasks at once (default: number of cores; with --executor openai, the endpoint concurrency)')
    .option('--threads <n>', 'worker threads (default: 1 for commands and model calls, min(concurrency, cores) for modules)')
    .option('--timeout <seconds>', 'kill an attempt after this long; 0 for none (default 0)')
    .option('--retries <n>', 'extra attempts for rate-limited, transient and timed-out failures (default 2)')
    .option('--retry-delay <seconds>', 'first retry delay, doubled each attempt, with jitter (default 1)')
    .addOption(new Option('--schedule <kind>', 'waves: wave after wave; eager: each task once its deps are done').choices(['waves', 'eager']))
    .option('--halt <fail=N|fail=N%>', 'stop starting tasks once N (or N%) tasks failed for non-transient reasons')
    .option(
      '--grace <seconds>',
      'after Ctrl-C or SIGTERM, how long running tasks may finish before they are killed and put back to pending (default 30)',
    )
    .addOption(
      new Option(
        '--output <mode>',
        "how a command's stdout becomes its result: auto (a JSON object with status or findings is the result, anything else text), result (must be a result object), text (always findings) (default auto)",
      ).choices(kOutputModes),
    )
    .option('--batch', "with --executor openai: send the model tasks through OpenAI's Batch API, one batch per wave (answers within 24h, at the Batch API's price)")
    .option('--batch-repair <mode>', 'with --batch: a bad answer is repaired in the next batch (batch) or at once, synchronously (sync) (default batch)')
    .option('--cancel-batch', 'with --batch: Ctrl-C or SIGTERM also cancels the running batches (by default they run on, and a resume collects them)')
    .option('--batch-poll <seconds>', 'with --batch: the longest wait between two polls of a batch (default 60)')
    .option('--bom', 'write tasks.csv with a UTF-8 byte order mark')
    .option('--json', 'print only a JSON summary when the run ends')
    .option('--max-tokens <n>', 'with --executor openai: tokens of one answer at most (max_completion_tokens, or max_tokens for servers that know only it)')
    .option('--context-window <n>', "with --executor openai: the model's context in tokens; longer prompts have their digests, then prev_context, cut (default: learned from the server's 400)")
    .option('--max-cost <usd>', "with --executor openai: stop starting tasks once the session's model calls cost this many US dollars (needs the model's price)")
    .option('--max-tokens-total <n>', "with --executor openai: stop starting tasks once the session's model calls spent this many tokens")
    .option('--price-input <usd>', "with --executor openai: the model's price of a million prompt tokens, in US dollars (with --price-output)")
    .option('--price-output <usd>', "with --executor openai: the model's price of a million completion tokens, in US dollars")
    .option('--price-cached <usd>', "with --executor openai: the price of a million cached prompt tokens (default: --price-input)");
}

function number(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new WaveError('USAGE', `Expected \`--${flag}\` to be a number, got \`${text}\``);
  }
  return value;
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** Turns flags into library options; checks that only one executor is named. */
export function runOptionsFromFlags(flags: RunFlags): RunOptions {
  if (flags.cmd !== undefined && flags.module !== undefined) {
    throw new WaveError('USAGE', 'Pass either --cmd or --module, not both');
  }
  if (flags.executor === 'command' && flags.cmd === undefined) throw new WaveError('USAGE', '--executor command needs --cmd TEMPLATE');
  if (flags.executor === 'module' && flags.module === undefined) throw new WaveError('USAGE', '--executor module needs --module PATH');
  if (flags.executor === 'openai' && (flags.cmd !== undefined || flags.module !== undefined)) {
    throw new WaveError('USAGE', '--executor openai goes without --cmd and --module');
  }
  if (flags.executor === 'openai' && !flags.model) throw new WaveError('USAGE', '--executor openai needs --model NAME');
  if ((flags.model !== undefined || flags.baseUrl !== undefined) && flags.executor !== 'openai') {
    throw new WaveError('USAGE', '--model and --base-url go with --executor openai');
  }
  const options: RunOptions = {};
  if (flags.cmd !== undefined) options.executor = { type: 'command', cmd: flags.cmd };
  // Relative to the session folder, as in session.json (runSession resolves it).
  if (flags.module !== undefined) options.executor = { type: 'module', path: flags.module };
  if (flags.executor === 'openai') {
    const baseUrl = flags.baseUrl ?? process.env['OPENAI_BASE_URL'];
    options.executor = { type: 'openai', model: flags.model!, ...(baseUrl ? { baseUrl } : {}) };
  }
  const set = <K extends keyof RunOptions>(key: K, value: RunOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('concurrency', number('concurrency', flags.concurrency));
  set('threads', number('threads', flags.threads));
  set('timeoutSeconds', number('timeout', flags.timeout));
  set('retries', number('retries', flags.retries));
  const delay = number('retry-delay', flags.retryDelay);
  set('retryBaseMs', delay === undefined ? undefined : delay * 1000);
  set('schedule', flags.schedule);
  set('output', flags.output);
  set('halt', flags.halt === undefined ? undefined : parseHalt(flags.halt));
  set('bom', flags.bom);
  set('endpointConcurrency', number('endpoint-concurrency', flags.endpointConcurrency));
  set('maxTokens', number('max-tokens', flags.maxTokens));
  set('contextWindow', number('context-window', flags.contextWindow));
  set('maxCostUsd', number('max-cost', flags.maxCost));
  set('maxTokensTotal', number('max-tokens-total', flags.maxTokensTotal));
  const price = {
    ...optional('input', number('price-input', flags.priceInput)),
    ...optional('output', number('price-output', flags.priceOutput)),
    ...optional('cached_input', number('price-cached', flags.priceCached)),
  };
  set('price', Object.keys(price).length > 0 ? price : undefined);
  set('batch', flags.batch);
  if (flags.batchRepair !== undefined && flags.batchRepair !== 'batch' && flags.batchRepair !== 'sync') {
    throw new WaveError('USAGE', `Expected \`--batch-repair\` to be batch or sync, got \`${flags.batchRepair}\``);
  }
  set('batchRepair', flags.batchRepair);
  set('cancelBatch', flags.cancelBatch);
  set('batchPollSeconds', number('batch-poll', flags.batchPoll));
  return options;
}
