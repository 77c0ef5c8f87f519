import { formatUsd } from './pricing.js';
import type { UsageProblem, UsageSum } from './usage.js';

/** A task's or a session's spending in a few words: `270 tokens, $0.00012` (`cost unknown` without a price). */
export function spendText(sum: UsageSum): string {
  const cost = costText(sum);
  return `${sum.prompt_tokens + sum.completion_tokens} tokens, ${cost === 'unknown' ? 'cost unknown' : cost}`;
}

/**
 * A task's cost (context.md's table, report.html's task table and details): `$0.0042`;
 * `unknown` when none of its requests has a price; `$0.0042 + 2 request(s) without a price`
 * when some have none, so that a part is never shown as the whole.
 */
export function costText(sum: UsageSum): string {
  if (sum.unpriced > 0 && sum.cost_usd === 0) return 'unknown';
  const unpriced = sum.unpriced > 0 ? ` + ${sum.unpriced} request(s) without a price` : '';
  return `${formatUsd(sum.cost_usd)}${unpriced}`;
}

/** The session's cost (status, context.md, report.html's summary): the total, and what is not in it. */
export function costSummary(totals: UsageSum): string {
  const requests = `${totals.requests} request(s)`;
  if (totals.unpriced === totals.requests && totals.cost_usd === 0) {
    return `unknown (${requests}; no price for their model: set "pricing" in session.json or pass --price-input and --price-output)`;
  }
  const unpriced = totals.unpriced > 0 ? `; ${totals.unpriced} of them without a price, not counted` : '';
  return `${formatUsd(totals.cost_usd)} (${requests}${unpriced})`;
}

/** The session's cost line (status, context.md): `Cost: ` and costSummary. */
export function costLine(totals: UsageSum): string {
  return `Cost: ${costSummary(totals)}`;
}

/**
 * What the failed tasks spent, said apart (report.html's summary):
 * `8,948 tokens on tasks that failed ($0.012)`.
 */
export function failedSpendText(sum: UsageSum): string {
  const cost = costText(sum);
  return `${(sum.prompt_tokens + sum.completion_tokens).toLocaleString('en-US')} tokens on tasks that failed (${cost === 'unknown' ? 'cost unknown' : cost})`;
}

/**
 * The share of the prompt tokens the provider served from its prompt cache, as status,
 * context.md and report.html say it after `Prompt cache: `:
 * `3,040 of 3,800 prompt tokens cached (80.0%)`; undefined when no prompt token was reported.
 * A provider bills cached tokens at a fraction, and csv-wave lays its prompts out so that
 * the part the tasks of a role share comes first (docs/executors.md#prompt-caching).
 */
export function cachedShareText(sum: Pick<UsageSum, 'prompt_tokens' | 'cached_tokens'>): string | undefined {
  if (sum.prompt_tokens === 0) return undefined;
  const cached = Math.min(sum.cached_tokens, sum.prompt_tokens);
  const share = ((100 * cached) / sum.prompt_tokens).toFixed(1);
  return `${cached.toLocaleString('en-US')} of ${sum.prompt_tokens.toLocaleString('en-US')} prompt tokens cached (${share}%)`;
}

/** What status --json and report data give of a task's or the session's spending. */
export function spendJson(sum: UsageSum): { prompt: number; completion: number; cached: number; requests: number; cost_usd: number; unpriced_requests: number } {
  return {
    prompt: sum.prompt_tokens,
    completion: sum.completion_tokens,
    cached: sum.cached_tokens,
    requests: sum.requests,
    cost_usd: sum.cost_usd,
    unpriced_requests: sum.unpriced,
  };
}

/** The most problems of usage.ndjson said one by one; the rest are counted. */
const kMaxProblemLines = 10;

/** What status, context.md and a run say of usage.ndjson's bad and repeated lines: `usage.ndjson line 7: …`. */
export function usageProblemLines(problems: readonly UsageProblem[]): string[] {
  const lines = problems.slice(0, kMaxProblemLines).map((problem) => `usage.ndjson line ${problem.line}: ${problem.problem}`);
  if (problems.length > kMaxProblemLines) lines.push(`usage.ndjson: ${problems.length - kMaxProblemLines} more line(s) not counted or counted once (status --json lists them all)`);
  return lines;
}

/** What came from the result cache, in words: `12 task(s) from the cache, $0.84 not spent` (the sum only when some was spent). */
export function cacheText(tasks: number, savedUsd: number): string {
  return `${tasks} task(s) from the cache${savedUsd > 0 ? `, ${formatUsd(savedUsd)} not spent` : ''}`;
}
