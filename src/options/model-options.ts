import { WaveError } from '../errors.js';
import type { ExecutorSpec } from '../executors/messages.js';
import type { ModelPrice, PriceTable } from '../knowledge/pricing.js';
import type { TableRunOptions } from '../option-table.js';

/**
 * The options of model calls (the openai, codex and claude executors) that the table does not hold: prices,
 * which are an object (session.json `pricing`) or three flags together.
 */
export interface ModelPriceOptions {
  /** Prices by model in US dollars per million tokens (session.json `pricing`). @default none */
  pricing?: PriceTable;
  /** The run model's price, over `pricing`'s (`--price-input`, `--price-output`, `--price-cached`). @default none */
  price?: Partial<ModelPrice>;
}

/** The model options modelOptions reads: the table's (checked against its bounds already) and the prices. */
export type ModelRunOptions = ModelPriceOptions & Pick<TableRunOptions, 'maxTokens' | 'contextWindow' | 'maxCostUsd' | 'maxTokensTotal'>;

function expect(name: string, valid: boolean, value: unknown, what: string): void {
  if (!valid) throw new WaveError('USAGE', `Expected \`${name}\` to be ${what}, got \`${String(value)}\` (${typeof value})`);
}

/**
 * The options of model calls, checked: the answer and context limits go into the openai
 * executor's spec, and the run model's flag prices over session.json's. A budget in
 * dollars needs the model's price; each of them needs a model executor. Their bounds are
 * the table's (option-table.ts), checked before.
 */
export function modelOptions(options: ModelRunOptions, executor: ExecutorSpec): { executor: ExecutorSpec; pricing: PriceTable } {
  const { maxTokens, contextWindow, maxCostUsd, maxTokensTotal, price } = options;
  // Named by their flags: the options' names with the flags' spelling (maxCostUsd is --max-cost).
  const given = { '--max-tokens': maxTokens, '--context-window': contextWindow, '--max-cost': maxCostUsd, '--max-tokens-total': maxTokensTotal, '--price-*': price };
  const named = Object.entries(given).filter(([, value]) => value !== undefined).map(([name]) => name);
  if (executor.type !== 'openai' && executor.type !== 'codex' && executor.type !== 'claude') {
    if (named.length > 0) throw new WaveError('USAGE', `${named.join(', ')}: for model calls only; pass --executor openai --model NAME, or drop them`);
    return { executor, pricing: options.pricing ?? {} };
  }
  // An agent's answer length and prompt are the CLI's to manage.
  const openAiOnly = executor.type === 'openai' ? [] : named.filter((name) => name === '--max-tokens' || name === '--context-window');
  if (openAiOnly.length > 0) throw new WaveError('USAGE', `${openAiOnly.join(', ')}: for --executor openai only; drop them for --executor ${executor.type}`);
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
  // claude reports what each invocation cost (total_cost_usd): its budget needs no price table.
  if (maxCostUsd !== undefined && executor.type !== 'claude' && pricing[executor.model] === undefined) {
    throw new WaveError(
      'USAGE',
      `--max-cost needs the price of ${executor.model}: pass --price-input and --price-output (US dollars per million tokens), or add it to session.json's "pricing"`,
    );
  }
  if (executor.type !== 'openai') return { executor, pricing };
  const spec = {
    ...executor,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(contextWindow === undefined ? {} : { contextWindow }),
  };
  return { executor: spec, pricing };
}
