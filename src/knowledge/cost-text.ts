import { formatUsd } from './pricing.js';
import type { UsageProblem, UsageSum } from './usage.js';

/** A task's or a session's spending in a few words: `270 tokens, $0.00012` (`cost unknown` without a price). */
export function spendText(sum: UsageSum): string {
  const tokens = `${sum.prompt_tokens + sum.completion_tokens} tokens`;
  if (sum.unpriced > 0 && sum.cost_usd === 0) return `${tokens}, cost unknown`;
  const unpriced = sum.unpriced > 0 ? ` + ${sum.unpriced} request(s) without a price` : '';
  return `${tokens}, ${formatUsd(sum.cost_usd)}${unpriced}`;
}

/** The session's cost line (status, context.md): the total, and what is not in it. */
export function costLine(totals: UsageSum): string {
  const requests = `${totals.requests} request(s)`;
  if (totals.unpriced === totals.requests && totals.cost_usd === 0) {
    return `Cost: unknown (${requests}; no price for their model: set "pricing" in session.json or pass --price-input and --price-output)`;
  }
  const unpriced = totals.unpriced > 0 ? `; ${totals.unpriced} of them without a price, not counted` : '';
  return `Cost: ${formatUsd(totals.cost_usd)} (${requests}${unpriced})`;
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
