import { usageProblemLines } from './cost-text.js';
import { formatUsd, type PriceTable } from './pricing.js';
import { readUsage, type UsageLine, type UsageTotals } from './usage.js';

/** What a session may spend on model calls (`--max-cost`, `--max-tokens-total`). */
export interface BudgetLimits {
  maxCostUsd?: number | undefined;
  maxTokensTotal?: number | undefined;
}

/**
 * The spending of a session's model calls against its budget. It starts from what
 * usage.ndjson holds (every run of the session, so that a resume goes on counting) and
 * adds each request's line as it is written. A request without usage from the server
 * adds nothing: its tokens are unknown. A line that does not check (a negative or forged
 * count among them) is not counted: no line can take spent tokens or money away.
 */
export class Budget {
  readonly #limits: BudgetLimits;
  #tokens: number;
  #costUsd: number;

  constructor(limits: BudgetLimits, spent: Pick<UsageTotals, 'prompt_tokens' | 'completion_tokens' | 'cost_usd'> | undefined) {
    this.#limits = limits;
    this.#tokens = spent === undefined ? 0 : spent.prompt_tokens + spent.completion_tokens;
    this.#costUsd = spent?.cost_usd ?? 0;
  }

  /** Whether there is a limit at all. */
  get limited(): boolean {
    return this.#limits.maxCostUsd !== undefined || this.#limits.maxTokensTotal !== undefined;
  }

  add(lines: readonly UsageLine[]): void {
    for (const line of lines) {
      this.#tokens += line.prompt_tokens + line.completion_tokens;
      this.#costUsd += line.cost_usd ?? 0;
    }
  }

  /** US dollars left of --max-cost; undefined when the run has no such limit. */
  leftUsd(): number | undefined {
    const { maxCostUsd } = this.#limits;
    return maxCostUsd === undefined ? undefined : Math.max(0, maxCostUsd - this.#costUsd);
  }

  /** Why no new task may start, once a limit is reached; undefined before. */
  reached(): string | undefined {
    const { maxCostUsd, maxTokensTotal } = this.#limits;
    if (maxCostUsd !== undefined && this.#costUsd >= maxCostUsd) {
      return `the session's model calls cost ${formatUsd(this.#costUsd)}, the budget of --max-cost ${maxCostUsd}`;
    }
    if (maxTokensTotal !== undefined && this.#tokens >= maxTokensTotal) {
      return `the session's model calls spent ${this.#tokens} tokens, the budget of --max-tokens-total ${maxTokensTotal}`;
    }
    return undefined;
  }
}

/**
 * The budget of a run of the session: what usage.ndjson holds, each line it does not count
 * (or counts once though written twice) told to `warn` with its line number.
 */
export function sessionBudget(sessionDir: string, limits: BudgetLimits, pricing: PriceTable | undefined, warn: (message: string) => void): Budget {
  const spent = readUsage(sessionDir, pricing);
  for (const line of usageProblemLines(spent?.problems ?? [])) warn(line);
  return new Budget(limits, spent);
}
