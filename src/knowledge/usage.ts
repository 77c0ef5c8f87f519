import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { sessionPathForRead } from '../files/session-path.js';
import { requestCost, type ModelPrice, type PriceTable } from './pricing.js';
import { batchIdentity, checkUsageLine, kMaxRequestCostUsd, kMaxRequestTokens, type CountedLine } from './usage-line-check.js';
import { kLayout, type SessionFileWriter } from '../layout.js';

const kUsageFile = kLayout.usage;

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
  /**
   * `first` the task's own request, `repair` the request that asks again after an unusable
   * answer; `agent` a turn of an agent CLI (codex, claude), its repair turn included.
   */
  kind: 'first' | 'repair' | 'agent';
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
  /** The batch and the line of it (custom_id) that answered it: a batch line is billed once, and counted once. */
  batch_id?: string;
  custom_id?: string;
  /** An agent's thread (codex) or session (claude) id, as the CLI named it. */
  agent_session?: string;
  /** Completion tokens spent on reasoning (part of completion_tokens). */
  reasoning_tokens?: number;
  /** Prompt tokens the server wrote to its prompt cache (part of prompt_tokens; claude reports them). */
  cache_creation_tokens?: number;
  /** What the agent CLI itself said the turn cost, in US dollars: it wins over the price table. */
  cost_usd?: number;
  /**
   * Characters of the messages the request sent (openai): with prompt_tokens, the server's
   * own characters per token, from which `estimate` counts the tokens of prompts not sent yet.
   */
  prompt_chars?: number;
}

/** One line of usage.ndjson. `cost_usd` is there when the CLI reported it or the run knew the model's price. */
export interface UsageLine extends RequestUsage {
  ts: string;
  task: string;
  attempt: number;
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
  const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= kMaxRequestTokens;
  return requests.flatMap((item: unknown): RequestUsage[] => {
    if (item === null || typeof item !== 'object') return [];
    const given = item as Partial<Record<keyof RequestUsage, unknown>>;
    return [
      {
        request: Math.max(1, count(given.request)),
        kind: given.kind === 'repair' || given.kind === 'agent' ? given.kind : 'first',
        model: typeof given.model === 'string' ? given.model.slice(0, kMaxModelChars) : '',
        prompt_tokens: count(given.prompt_tokens),
        completion_tokens: count(given.completion_tokens),
        cached_tokens: count(given.cached_tokens),
        reported: given.reported !== false,
        ...(given.batch === true ? { batch: true } : {}),
        ...(typeof given.batch_id === 'string' && typeof given.custom_id === 'string'
          ? { batch_id: given.batch_id.slice(0, kMaxModelChars), custom_id: given.custom_id.slice(0, kMaxModelChars) }
          : {}),
        ...(typeof given.agent_session === 'string' ? { agent_session: given.agent_session.slice(0, kMaxModelChars) } : {}),
        ...(isCount(given.reasoning_tokens) ? { reasoning_tokens: given.reasoning_tokens } : {}),
        ...(isCount(given.cache_creation_tokens) ? { cache_creation_tokens: given.cache_creation_tokens } : {}),
        ...(isCount(given.prompt_chars) ? { prompt_chars: given.prompt_chars } : {}),
        ...(typeof given.cost_usd === 'number' && Number.isFinite(given.cost_usd) && given.cost_usd >= 0 && given.cost_usd <= kMaxRequestCostUsd
          ? { cost_usd: given.cost_usd }
          : {}),
      },
    ];
  });
}

/**
 * The usage.ndjson lines of an attempt's requests, priced with `price` when the run has
 * one for their model (a line's cost is the price of the run that wrote it). A cost the
 * agent CLI reported is kept as it is: the CLI knows its own prices.
 */
export function usageLines(taskId: string, attempt: number, requests: readonly RequestUsage[], price?: ModelPrice): UsageLine[] {
  const ts = new Date().toISOString();
  return requests.map((request) => ({
    ts,
    task: taskId,
    attempt,
    ...request,
    ...(price === undefined || !request.reported || request.cost_usd !== undefined ? {} : { cost_usd: requestCost(price, request) }),
  }));
}

/** Appends lines to `usage.ndjson` in one write: a crash leaves all of them, or a cut last line that readUsage skips. */
export function appendUsageLines(files: SessionFileWriter, lines: readonly UsageLine[]): void {
  if (lines.length === 0) return;
  appendToUsage(files, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
}

/**
 * Appends the tokens of an attempt that told only their sum (no per-request list) to `usage.ndjson`.
 */
export function recordUsage(files: SessionFileWriter, taskId: string, usage: TokenUsage): void {
  const line = { ts: new Date().toISOString(), task: taskId, ...usage };
  appendToUsage(files, `${JSON.stringify(line)}\n`);
}

/**
 * A file whose last line was cut short (a kill mid-write, a full disk, an edit) gets a new
 * line first: appended to the cut line, the first new line would be lost with it.
 */
function appendToUsage(files: SessionFileWriter, text: string): void {
  // Read through the same check as a read the session names: never a symlink out of it.
  const path = sessionPathForRead(files.dir, kUsageFile);
  files.append(kUsageFile, endsLine(path) ? text : `\n${text}`);
}

/** Whether the file is missing, empty, or ends with a new line. */
function endsLine(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return true;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return true;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
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

/** A line of usage.ndjson that was not counted, or counted once though written twice: its number (from 1) and why. */
export interface UsageProblem {
  line: number;
  problem: string;
}

export interface UsageTotals extends UsageSum {
  byTask: Map<string, UsageSum>;
  /** The lines not counted (bad JSON, a bad count, a cut last line) and the repeated ones, in file order. */
  problems: UsageProblem[];
}

const emptySum = (): UsageSum => ({ prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, requests: 0, cost_usd: 0, unpriced: 0 });

/**
 * Tokens and cost per task and in all, from `usage.ndjson`; undefined when no model was
 * called. A line without a cost of its own is priced from `prices` by its model, when the
 * table has it. The file may have been cut short or edited: a line that does not check
 * (usage-line-check.ts) is not counted, and a line that repeats one (the same batch answer,
 * or the same request's line twice) is counted once; both are in `problems`.
 */
export function readUsage(sessionDir: string, prices: PriceTable = {}): UsageTotals | undefined {
  const path = join(sessionDir, kUsageFile);
  if (!existsSync(path)) return undefined;
  const totals: UsageTotals = { ...emptySum(), byTask: new Map(), problems: [] };
  for (const line of countedLines(path, totals.problems)) add(totals, line, prices);
  return totals;
}

/**
 * The lines of `usage.ndjson` that count, in file order (each request once, as readUsage
 * counts them); empty without the file. What `estimate` learns a session's history from.
 */
export function readUsageLines(sessionDir: string): CountedLine[] {
  const path = join(sessionDir, kUsageFile);
  return existsSync(path) ? countedLines(path, []) : [];
}

/** The lines that check, each request once; the others go to `problems`. */
function countedLines(path: string, problems: UsageProblem[]): CountedLine[] {
  const lines: CountedLine[] = [];
  /** The line that counted for each identity. */
  const counted = new Map<string, number>();
  const texts = readFileSync(path, 'utf8').split('\n');
  texts.forEach((text, index) => {
    if (text.trim() === '') return;
    const number = index + 1;
    const line = checkUsageLine(text);
    if ('problem' in line) {
      // The last line has no end of line: it was being written when the writing stopped.
      const cut = index === texts.length - 1 ? ' It has no end of line: its writing was cut short.' : '';
      problems.push({ line: number, problem: `${line.problem}: not counted.${cut}` });
      return;
    }
    if (line.identity !== undefined) {
      const first = counted.get(line.identity);
      if (first !== undefined) {
        problems.push({ line: number, problem: `the same ${line.byBatchLine ? 'batch answer' : 'request'} as line ${first}: counted once.` });
        return;
      }
      counted.set(line.identity, number);
    }
    lines.push(line);
  });
  return lines;
}

/** Some tasks' requests added up from readUsage's sums per task (the failed ones, say); undefined when none made any. */
export function usageOfTasks(totals: UsageTotals, ids: Iterable<string>): UsageSum | undefined {
  let sum: UsageSum | undefined;
  for (const id of ids) {
    const spent = totals.byTask.get(id);
    if (spent === undefined) continue;
    sum ??= emptySum();
    sum.prompt_tokens += spent.prompt_tokens;
    sum.completion_tokens += spent.completion_tokens;
    sum.cached_tokens += spent.cached_tokens;
    sum.requests += spent.requests;
    sum.cost_usd += spent.cost_usd;
    sum.unpriced += spent.unpriced;
  }
  return sum;
}

function add(totals: UsageTotals, line: CountedLine, prices: PriceTable): void {
  const price = line.model !== undefined && Object.hasOwn(prices, line.model) ? prices[line.model] : undefined;
  const cost = line.cost_usd ?? (price && requestCost(price, line));
  let sum = totals.byTask.get(line.task);
  if (sum === undefined) totals.byTask.set(line.task, (sum = emptySum()));
  for (const into of [totals, sum]) {
    into.prompt_tokens += line.prompt_tokens;
    into.completion_tokens += line.completion_tokens;
    into.cached_tokens += line.cached_tokens;
    into.requests += 1;
    if (cost !== undefined) into.cost_usd += cost;
    else if (line.prompt_tokens + line.completion_tokens > 0) into.unpriced += 1;
  }
}

/** The batch lines (`batch_id custom_id`) usage.ndjson counts already: an answer taken again is not written again. */
export function batchAnswersIn(sessionDir: string): Set<string> {
  const path = join(sessionDir, kUsageFile);
  const answers = new Set<string>();
  if (!existsSync(path)) return answers;
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (!text.includes('"batch_id"')) continue;
    const line = checkUsageLine(text);
    if (!('problem' in line) && line.byBatchLine && line.identity !== undefined) answers.add(line.identity);
  }
  return answers;
}

/** The identity of a request's line in batchAnswersIn's set; undefined when no batch line answered it. */
export function batchAnswerOf(request: Pick<RequestUsage, 'batch_id' | 'custom_id'>): string | undefined {
  return request.batch_id !== undefined && request.custom_id !== undefined ? batchIdentity(request.batch_id, request.custom_id) : undefined;
}
