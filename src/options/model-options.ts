import { WaveError } from '../errors.js';
import type { ExecutorSpec } from '../executors/messages.js';
import type { ModelPrice, PriceTable } from '../knowledge/pricing.js';

/** The options of model calls (the openai executor), part of RunOptions. */
export interface ModelRunOptions {
  /** Tokens of one model answer at most (openai; `--max-tokens`). @default the server's */
  maxTokens?: number;
  /**
   * The model's context window in tokens (openai; `--context-window`): a prompt that would
   * not fit has its digests, then prev_context, cut. @default learned from the server's 400
   */
  contextWindow?: number;
  /**
   * Stop starting tasks once the session's model calls cost this many US dollars
   * (`--max-cost`; every run's usage.ndjson lines count). Needs the model's price. @default none
   */
  maxCostUsd?: number;
  /** Stop starting tasks once the session's model calls spent this many tokens, prompt and completion (`--max-tokens-total`). @default none */
  maxTokensTotal?: number;
  /** Prices by model in US dollars per million tokens (session.json `pricing`). @default none */
  pricing?: PriceTable;
  /** The run model's price, over `pricing`'s (`--price-input`, `--price-output`, `--price-cached`). @default none */
  price?: Partial<ModelPrice>;
}

function expect(name: string, valid: boolean, value: unknown, what: string): void {
  if (!valid) throw new WaveError('USAGE', `Expected \`${name}\` to be ${what}, got \`${String(value)}\` (${typeof value})`);
}

const isPositiveInteger = (value: number) => Number.isInteger(value) && value > 0;

/**
 * The options of model calls, checked: the answer and context limits go into the openai
 * executor's spec, and the run model's flag prices over session.json's. A budget in
 * dollars needs the model's price; each of them needs a model executor.
 */
export function modelOptions(options: ModelRunOptions, executor: ExecutorSpec): { executor: ExecutorSpec; pricing: PriceTable } {
  const { maxTokens, contextWindow, maxCostUsd, maxTokensTotal, price } = options;
  // Named by their flags: the options' names with the flags' spelling (maxCostUsd is --max-cost).
  const given = { '--max-tokens': maxTokens, '--context-window': contextWindow, '--max-cost': maxCostUsd, '--max-tokens-total': maxTokensTotal, '--price-*': price };
  const named = Object.entries(given).filter(([, value]) => value !== undefined).map(([name]) => name);
  if (executor.type !== 'openai') {
    if (named.length > 0) throw new WaveError('USAGE', `${named.join(', ')}: for model calls only; pass --executor openai --model NAME, or drop them`);
    return { executor, pricing: options.pricing ?? {} };
  }
  if (maxTokens !== undefined) expect('--max-tokens', isPositiveInteger(maxTokens), maxTokens, 'a positive integer (tokens)');
  if (contextWindow !== undefined) {
    expect('--context-window', Number.isInteger(contextWindow) && contextWindow >= 256, contextWindow, 'an integer ≥ 256 (tokens)');
  }
  if (maxCostUsd !== undefined) expect('--max-cost', Number.isFinite(maxCostUsd) && maxCostUsd > 0, maxCostUsd, 'a positive number of US dollars');
  if (maxTokensTotal !== undefined) expect('--max-tokens-total', isPositiveInteger(maxTokensTotal), maxTokensTotal, 'a positive integer (tokens)');
  for (const [name, value] of Object.entries(price ?? {})) {
    const flag = name === 'cached_input' ? '--price-cached' : `--price-${name}`;
    expect(flag, typeof value === 'number' && Number.isFinite(value) && value >= 0, value, 'a number of US dollars per million tokens ≥ 0');
  }
  const pricing: Record<string, ModelPrice> = { ...options.pricing };
  const merged = { ...pricing[executor.model], ...price };
  if (price !== undefined) {
    if (merged.input === undefined || merged.output === undefined) {
      throw new WaveError(
        'USAGE',
        `A price for ${executor.model} needs both --price-input and --price-output (US dollars per million tokens), or an entry in session.json's "pricing"`,
      );
    }
    pricing[executor.model] = merged as ModelPrice;
  }
  if (maxCostUsd !== undefined && pricing[executor.model] === undefined) {
    throw new WaveError(
      'USAGE',
      `--max-cost needs the price of ${executor.model}: pass --price-input and --price-output (US dollars per million tokens), or add it to session.json's "pricing"`,
    );
  }
  const spec = {
    ...executor,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(contextWindow === undefined ? {} : { contextWindow }),
  };
  return { executor: spec, pricing };
}
