import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionPathForWrite } from './session-path.js';
import { writeWholeFile } from '../csv/write-all.js';
import { requestCost, type ModelPrice, type PriceTable } from './pricing.js';

const kUsageFile = 'usage.ndjson';

/** Prompt and completion tokens (the executors' TokenUsage, not imported: executors import this file). */
interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * The tokens of one model request as the server reported them. An attempt sends one
 * request, and one more to repair an unusable answer; each is one line of usage.ndjson.
 * Plain data: it crosses the worker boundary (and a queue, as JSON) inside the reply.
 */
export interface RequestUsage {
  /** The request's place in its attempt: 1 for the first, 2 for the repair. */
  request: number;
  /** `first` the task's own request, `repair` the request that asks again after an unusable answer. */
  kind: 'first' | 'repair';
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens the server served from its prompt cache (part of prompt_tokens). */
  cached_tokens: number;
  /**
   * False when the server reported nothing: the request was cut off (a timeout, the
   * connection lost) or the server sends no usage. Its tokens are then unknown, not zero.
   */
  reported: boolean;
  /** Answered through the Batch API: priced with the model's batch discount. */
  batch?: boolean;
}

/** One line of usage.ndjson. `cost_usd` is there when the run knew the model's price. */
export interface UsageLine extends RequestUsage {
  ts: string;
  task: string;
  attempt: number;
  cost_usd?: number;
}

/** The requests' tokens added up; undefined when no request reported any. */
export function sumUsage(requests: readonly RequestUsage[]): TokenUsage | undefined {
  const reported = requests.filter((request) => request.reported);
  if (reported.length === 0) return undefined;
  return {
    prompt_tokens: reported.reduce((sum, request) => sum + request.prompt_tokens, 0),
    completion_tokens: reported.reduce((sum, request) => sum + request.completion_tokens, 0),
  };
}

/** Longest model name kept in a line: the name comes from the run's options, a long one is a mistake. */
const kMaxModelChars = 200;

/**
 * The requests of a reply as they may be written: a reply is read from JSON that may come
 * from another thread or machine, so each field is checked (counts are whole numbers ≥ 0)
 * and anything else in the list is dropped.
 */
export function checkedRequests(requests: unknown): RequestUsage[] {
  if (!Array.isArray(requests)) return [];
  const count = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
  return requests.flatMap((item: unknown): RequestUsage[] => {
    if (item === null || typeof item !== 'object') return [];
    const given = item as Partial<Record<keyof RequestUsage, unknown>>;
    return [
      {
        request: Math.max(1, count(given.request)),
        kind: given.kind === 'repair' ? 'repair' : 'first',
        model: typeof given.model === 'string' ? given.model.slice(0, kMaxModelChars) : '',
        prompt_tokens: count(given.prompt_tokens),
        completion_tokens: count(given.completion_tokens),
        cached_tokens: count(given.cached_tokens),
        reported: given.reported !== false,
        ...(given.batch === true ? { batch: true } : {}),
      },
    ];
  });
}

/**
 * The usage.ndjson lines of an attempt's requests, priced with `price` when the run has
 * one for their model (a line's cost is the price of the run that wrote it).
 */
export function usageLines(taskId: string, attempt: number, requests: readonly RequestUsage[], price?: ModelPrice): UsageLine[] {
  const ts = new Date().toISOString();
  return requests.map((request) => ({
    ts,
    task: taskId,
    attempt,
    ...request,
    ...(price === undefined || !request.reported ? {} : { cost_usd: requestCost(price, request) }),
  }));
}

/** Appends lines to `usage.ndjson` in one write: a crash leaves all of them, or a cut last line that readUsage skips. */
export function appendUsageLines(sessionDir: string, lines: readonly UsageLine[]): void {
  if (lines.length === 0) return;
  writeWholeFile(sessionPathForWrite(sessionDir, kUsageFile), lines.map((line) => `${JSON.stringify(line)}\n`).join(''), 'a');
}

/**
 * Appends the tokens of an attempt that told only their sum (no per-request list) to `usage.ndjson`.
 */
export function recordUsage(sessionDir: string, taskId: string, usage: TokenUsage): void {
  const line = { ts: new Date().toISOString(), task: taskId, ...usage };
  writeWholeFile(sessionPathForWrite(sessionDir, kUsageFile), `${JSON.stringify(line)}\n`, 'a');
}

/** Tokens and cost of a task, or of the whole session. */
export interface UsageSum extends TokenUsage {
  cached_tokens: number;
  /** Requests usage.ndjson holds a line for. */
  requests: number;
  /** Dollars, from the lines' own cost, else the price table's price of their model. */
  cost_usd: number;
  /** Requests with tokens but no price known for their model: their cost is not in cost_usd. */
  unpriced: number;
}

export interface UsageTotals extends UsageSum {
  byTask: Map<string, UsageSum>;
}

const emptySum = (): UsageSum => ({ prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, requests: 0, cost_usd: 0, unpriced: 0 });

/**
 * Tokens and cost per task and in all, from `usage.ndjson`; undefined when no model was
 * called. A line without a cost of its own is priced from `prices` by its model, when the
 * table has it. A malformed line (a cut last line after a crash) is skipped.
 */
export function readUsage(sessionDir: string, prices: PriceTable = {}): UsageTotals | undefined {
  const path = join(sessionDir, kUsageFile);
  if (!existsSync(path)) return undefined;
  const totals: UsageTotals = { ...emptySum(), byTask: new Map() };
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    let entry: Partial<Record<keyof UsageLine, unknown>>;
    try {
      entry = JSON.parse(text) as typeof entry;
    } catch {
      continue;
    }
    if (entry === null || typeof entry !== 'object') continue;
    const line = {
      prompt_tokens: Number(entry.prompt_tokens) || 0,
      completion_tokens: Number(entry.completion_tokens) || 0,
      cached_tokens: Number(entry.cached_tokens) || 0,
      ...(entry.batch === true ? { batch: true } : {}),
    };
    const price = typeof entry.model === 'string' && Object.hasOwn(prices, entry.model) ? prices[entry.model] : undefined;
    const cost = typeof entry.cost_usd === 'number' && Number.isFinite(entry.cost_usd) ? entry.cost_usd : price && requestCost(price, line);
    const task = String(entry.task);
    let sum = totals.byTask.get(task);
    if (sum === undefined) totals.byTask.set(task, (sum = emptySum()));
    for (const into of [totals, sum]) {
      into.prompt_tokens += line.prompt_tokens;
      into.completion_tokens += line.completion_tokens;
      into.cached_tokens += line.cached_tokens;
      into.requests += 1;
      if (cost !== undefined) into.cost_usd += cost;
      else if (line.prompt_tokens + line.completion_tokens > 0) into.unpriced += 1;
    }
  }
  return totals;
}
