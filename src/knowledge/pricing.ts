/**
 * What one model costs, in US dollars per million tokens (session.json `pricing`, or the
 * `--price-*` flags for the run's model). Prompt tokens the server served from its cache
 * are priced `cached_input` (`input` when it is not given); a request answered through the
 * Batch API has `batch_discount` (a fraction, 0.5 for half price) taken off.
 */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number | undefined;
  batch_discount?: number | undefined;
}

/** Prices by model name, as session.json's `pricing` holds them. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The tokens a price applies to: one request's (see RequestUsage in usage.ts). */
export interface PricedTokens {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  batch?: boolean;
}

const kPerMillion = 1_000_000;

/** The cost of one request in US dollars. Cached tokens are part of prompt_tokens, as OpenAI counts them. */
export function requestCost(price: ModelPrice, tokens: PricedTokens): number {
  const cached = Math.min(tokens.cached_tokens, tokens.prompt_tokens);
  const full =
    ((tokens.prompt_tokens - cached) * price.input + cached * (price.cached_input ?? price.input) + tokens.completion_tokens * price.output) /
    kPerMillion;
  return tokens.batch === true ? full * (1 - (price.batch_discount ?? 0)) : full;
}

/** Dollars as a person reads them: cents for sums of a dollar or more, more digits below. */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toFixed(2)}`;
  if (usd === 0) return '$0';
  return `$${usd.toPrecision(2)}`;
}
