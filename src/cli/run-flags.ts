import { Option, type Command } from 'commander';
import { WaveError } from '../errors.js';
import type { RunOptions } from '../options/options.js';
import { kRunDefaults, kRunOptionTable, runOptionEntries, type OptionDefinition, type RunOptionName } from '../option-table.js';
import type { PipelineName } from '../schema/session.js';
import { addPipelineFlag } from './pipeline-flag.js';
import { addBackendFlags, type BackendFlags } from './backend-flag.js';
import { attributeOf, flagsOf, tableFlag, tableOptions } from './table-flags.js';

/**
 * The flags `run`, `resume` and `rerun` share, as commander hands them over: the table's
 * (option-table.ts) by their camel-cased flag names, and the executor's, prices', the
 * discussion gate's and output's own.
 */
export interface RunFlags extends BackendFlags {
  [tableFlag: string]: unknown;
  cmd?: string;
  module?: string;
  executor?: string;
  json?: boolean;
  model?: string;
  baseUrl?: string;
  answers?: string;
  auto?: boolean;
  pipeline?: PipelineName;
  priceInput?: string;
  priceOutput?: string;
  priceCached?: string;
}

/** The table's options that these commands take, with commander's name for each flag's value. */
function tableFlags(): Array<[RunOptionName, OptionDefinition, string]> {
  return flagsOf(runOptionEntries(), 'run').map(([name, definition]) => [name, definition, attributeOf(definition)]);
}

/** `json`: what `--json` prints, for a command that takes the run's flags but prints something else (explain, estimate). */
export function addRunFlags(command: Command, json = 'print only a JSON summary when the run ends'): Command {
  addBackendFlags(addPipelineFlag(command))
    .option('--cmd <template>', "run each task as a shell command; {column} is replaced by the shell-quoted cell")
    .option('--module <path>', 'run each task with the default export of this JS module: async (task, ctx) => result')
    .addOption(
      new Option('--executor <type>', 'command (with --cmd), module (with --module), openai, codex or claude (with --model)').choices([
        'command',
        'module',
        'openai',
        'codex',
        'claude',
      ]),
    )
    .option('--model <name>', "with --executor openai, codex or claude: the model; openai's key comes from OPENAI_API_KEY, the agents' from their own login")
    .option(
      '--base-url <url>',
      "with --executor openai: an OpenAI-compatible endpoint (default OPENAI_BASE_URL, else OpenAI); with codex: a Responses-API endpoint (default codex's own configuration); with claude: a Messages-API endpoint (ANTHROPIC_BASE_URL)",
    )
    .option('--answers <file>', 'answers for the discussion gate: a JSON list, used in order')
    .option('--auto', 'answer every discussion gate with Done');
  for (const [, definition] of tableFlags()) for (const option of tableOptions(definition)) command.addOption(option);
  return command
    .option('--json', json)
    .option('--price-input <usd>', "with --executor openai: the model's price of a million prompt tokens, in US dollars (with --price-output)")
    .option('--price-output <usd>', "with --executor openai: the model's price of a million completion tokens, in US dollars")
    .option('--price-cached <usd>', "with --executor openai: the price of a million cached prompt tokens (default: --price-input)");
}

/** A price flag's text as a number (its bounds are checked with the price, model-options.ts). */
function price<K extends string>(key: K, flag: string, text: string | undefined): Partial<Record<K, number>> {
  if (text === undefined) return {};
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new WaveError('USAGE', `Expected \`${flag}\` to be a number, got \`${text}\``);
  return { [key]: value } as Record<K, number>;
}

/** The run's grace from `--grace`, checked as the table says (the CLI's signal handler tells it). */
export function graceFromFlags(flags: RunFlags): number {
  return tableFlag(kRunOptionTable.graceSeconds, flags) ?? kRunDefaults.graceSeconds;
}

/** Turns flags into library options, each checked against the table and named by its flag; checks that only one executor is named. */
export function runOptionsFromFlags(flags: RunFlags): RunOptions {
  if (flags.cmd !== undefined && flags.module !== undefined) {
    throw new WaveError('USAGE', 'Pass either --cmd or --module, not both');
  }
  if (flags.executor === 'command' && flags.cmd === undefined) throw new WaveError('USAGE', '--executor command needs --cmd TEMPLATE');
  if (flags.executor === 'module' && flags.module === undefined) throw new WaveError('USAGE', '--executor module needs --module PATH');
  const model = flags.executor === 'openai' || flags.executor === 'codex' || flags.executor === 'claude' ? flags.executor : undefined;
  if (model !== undefined && (flags.cmd !== undefined || flags.module !== undefined)) {
    throw new WaveError('USAGE', `--executor ${model} goes without --cmd and --module`);
  }
  if (model !== undefined && !flags.model) throw new WaveError('USAGE', `--executor ${model} needs --model NAME`);
  if ((flags.model !== undefined || flags.baseUrl !== undefined) && model === undefined) {
    throw new WaveError('USAGE', '--model and --base-url go with --executor openai, codex or claude');
  }
  const options: RunOptions = {};
  if (flags.cmd !== undefined) options.executor = { type: 'command', cmd: flags.cmd };
  // Relative to the session folder, as in session.json (runSession resolves it).
  if (flags.module !== undefined) options.executor = { type: 'module', path: flags.module };
  if (flags.executor === 'openai') {
    const baseUrl = flags.baseUrl ?? process.env['OPENAI_BASE_URL'];
    options.executor = { type: 'openai', model: flags.model!, ...(baseUrl ? { baseUrl } : {}) };
  }
  // Codex's own configuration says where its default provider is: OPENAI_BASE_URL is the openai executor's.
  if (flags.executor === 'codex' || flags.executor === 'claude') {
    options.executor = { type: flags.executor, model: flags.model!, ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}) };
  }
  const table = options as Record<string, unknown>;
  for (const [name, definition, attribute] of tableFlags()) {
    if (flags[attribute] !== undefined) table[name] = tableFlag(definition, flags);
  }
  const prices = {
    ...price('input', '--price-input', flags.priceInput),
    ...price('output', '--price-output', flags.priceOutput),
    ...price('cached_input', '--price-cached', flags.priceCached),
  };
  if (Object.keys(prices).length > 0) options.price = prices;
  return options;
}
