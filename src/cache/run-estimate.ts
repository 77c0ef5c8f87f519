import { isAgentKind } from '../executors/agents/settings.js';
import type { ExecutorSpec } from '../executors/messages.js';
import { formatUsd, requestCost, type PriceTable } from '../knowledge/pricing.js';
import type { CountedLine } from '../knowledge/usage-line-check.js';
import { countSteps, type NextRun } from './next-run.js';
import type { InputRenderer } from './rendered-input.js';

/** A range of tokens or dollars; `high` is null when nothing bounds it (no history and no --max-tokens). */
export interface Range {
  low: number;
  high: number | null;
}

/** The tokens and cost of some tasks that execute. */
export interface SpendRange {
  tasks: number;
  prompt_tokens: Range;
  completion_tokens: Range;
  /** Null when the model has no price. */
  cost_usd: Range | null;
}

/** What `csv-wave estimate` says of the next run (docs/cache.md, "Estimate"). */
export interface RunEstimate {
  tasks: ReturnType<typeof countSteps>;
  /** The model the executor calls (openai, codex, claude); null for a command or module, which spend no tokens. */
  model: string | null;
  /** The tasks whose prompt is known now. */
  known?: SpendRange;
  /** The tasks that run after others the run runs first: their prompts hold results not known yet. */
  after?: SpendRange;
  /** Both. */
  total?: SpendRange;
  /** What the cache answers: the tokens and cost its entries were made with. */
  cached?: { tasks: number; prompt_tokens: number; completion_tokens: number; saved_usd: number | null };
  /** The characters per token the prompt tokens are counted with: the server's, else the default. */
  chars_per_token: { value: number; low: number; high: number; measured_requests: number };
  assumptions: string[];
}

export interface EstimateSetup {
  plan: NextRun;
  executor: ExecutorSpec;
  /** usage.ndjson's lines that count (readUsageLines): the session's history. */
  history: readonly CountedLine[];
  /** The role of each task id (those of usage.ndjson included), for the history per role. */
  roleOf: (id: string) => string | undefined;
  pricing: PriceTable;
  batch: boolean;
  maxTokens: number | undefined;
  renderer: InputRenderer;
}

/**
 * Without a server's measure: 4 characters per token, OpenAI's rule of thumb for English
 * text; the range, 3 to 5, covers denser text (code, other languages, small models'
 * tokenizers) and looser.
 */
const kDefaultCharsPerToken = { value: 4, low: 3, high: 5 };
/** The measured ratio's spread is widened by this much: a new prompt's text is never exactly an old one's. */
const kMeasuredMargin = 0.1;

/**
 * The tokens and cost the next run would spend (issue 25 item 6), as a range: prompt tokens
 * from each prompt as the run would render it, at the server's measured characters per
 * token (usage.ndjson's `prompt_chars` and `prompt_tokens`) or the default; completion
 * tokens from the fewest and most each role's attempts took so far, else 0 to
 * `--max-tokens`; priced with the run's price table, the batch discount with `--batch`.
 * Tasks the cache answers cost nothing and are told apart, with what they had cost. Tasks
 * that run after others are counted apart: their prompts are filled with what is known now,
 * and may grow to the most their role's prompts took.
 */
export function estimateRun(setup: EstimateSetup): RunEstimate {
  const { plan, executor } = setup;
  const model = modelOf(executor);
  const ratio = charsPerToken(setup.history);
  const estimate: RunEstimate = { tasks: countSteps(plan), model: model ?? null, chars_per_token: ratio, assumptions: [] };
  if (model === undefined) {
    estimate.assumptions.push(`the ${executor.type} executor calls no model: the run spends no tokens`);
    return estimate;
  }
  const roles = roleHistory(setup.history, setup.roleOf);
  const price = Object.hasOwn(setup.pricing, model) ? setup.pricing[model] : undefined;
  const agent = isAgentKind(executor.type);
  const known = emptySpend(price !== undefined);
  const after = emptySpend(price !== undefined);
  let newRoles = false;
  let cached: RunEstimate['cached'] = { tasks: 0, prompt_tokens: 0, completion_tokens: 0, saved_usd: 0 };
  for (const task of plan.tasks) {
    const next = task.next;
    if (next.step === 'cached') {
      cached.tasks++;
      for (const request of next.requests) {
        cached.prompt_tokens += request.prompt_tokens;
        cached.completion_tokens += request.completion_tokens;
      }
      cached.saved_usd = next.savedUsd === null || cached.saved_usd === null ? null : cached.saved_usd + next.savedUsd;
      continue;
    }
    if (next.step !== 'run') continue;
    const attempt = plan.attempts.get(task.id);
    const rendered = attempt === undefined ? undefined : setup.renderer.render(attempt);
    const chars = rendered?.kind === 'prompt' ? rendered.system.length + rendered.text.length : 0;
    const history = roles.get(task.role);
    if (history === undefined) newRoles = true;
    let prompt: Range = { low: Math.ceil(chars / ratio.high), high: Math.ceil(chars / ratio.low) };
    // An agent CLI sends its own instructions and tools with the prompt: its role's history says how much.
    if (agent && history !== undefined) prompt = { low: history.prompt.low, high: history.prompt.high };
    const waits = next.after.length > 0;
    if (waits && history !== undefined) prompt = { low: prompt.low, high: Math.max(prompt.high!, history.prompt.high!) };
    const completion: Range = history !== undefined ? history.completion : { low: 0, high: setup.maxTokens ?? null };
    add(waits ? after : known, prompt, completion, price === undefined ? undefined : (p, c) => requestCost(price, { prompt_tokens: p, completion_tokens: c, cached_tokens: 0, batch: setup.batch }));
  }
  if (cached.tasks === 0) cached = undefined;
  estimate.known = known;
  estimate.after = after;
  estimate.total = sumSpend(known, after);
  if (cached !== undefined) estimate.cached = cached;
  estimate.assumptions.push(...assumptions({ ratio, roles, agent, waits: after.tasks > 0, newRoles, maxTokens: setup.maxTokens, model, price: price !== undefined, batch: setup.batch, discount: price?.batch_discount }));
  return estimate;
}

function modelOf(executor: ExecutorSpec): string | undefined {
  if (executor.type === 'openai') return executor.model;
  if (isAgentKind(executor.type)) return (executor as { model?: string }).model ?? executor.type;
  return undefined;
}

/** The server's characters per token over the requests that recorded both counts; the default without any. */
function charsPerToken(history: readonly CountedLine[]): RunEstimate['chars_per_token'] {
  let chars = 0;
  let tokens = 0;
  let low = Number.POSITIVE_INFINITY;
  let high = 0;
  let requests = 0;
  for (const line of history) {
    if (line.prompt_chars === undefined || line.prompt_chars === 0 || line.prompt_tokens === 0) continue;
    const ratio = line.prompt_chars / line.prompt_tokens;
    chars += line.prompt_chars;
    tokens += line.prompt_tokens;
    low = Math.min(low, ratio);
    high = Math.max(high, ratio);
    requests++;
  }
  if (requests === 0) return { ...kDefaultCharsPerToken, measured_requests: 0 };
  return { value: chars / tokens, low: low * (1 - kMeasuredMargin), high: high * (1 + kMeasuredMargin), measured_requests: requests };
}

/** What a role's attempts took so far: the fewest and most prompt and completion tokens of one attempt (all its requests). */
interface RoleHistory {
  attempts: number;
  prompt: Range;
  completion: Range;
}

function roleHistory(history: readonly CountedLine[], roleOf: (id: string) => string | undefined): Map<string, RoleHistory> {
  const attempts = new Map<string, { role: string; prompt: number; completion: number }>();
  for (const line of history) {
    const role = roleOf(line.task);
    if (role === undefined || line.prompt_tokens + line.completion_tokens === 0) continue;
    const id = `${line.task} ${line.attempt ?? 1}`;
    const sum = attempts.get(id) ?? { role, prompt: 0, completion: 0 };
    // An agent's turns all count; a model's first request is its prompt (a repair adds to the completion's count only).
    if (line.kind !== 'repair') sum.prompt += line.prompt_tokens;
    sum.completion += line.completion_tokens;
    attempts.set(id, sum);
  }
  const roles = new Map<string, RoleHistory>();
  for (const { role, prompt, completion } of attempts.values()) {
    const seen = roles.get(role);
    if (seen === undefined) roles.set(role, { attempts: 1, prompt: { low: prompt, high: prompt }, completion: { low: completion, high: completion } });
    else {
      seen.attempts++;
      seen.prompt = { low: Math.min(seen.prompt.low, prompt), high: Math.max(seen.prompt.high!, prompt) };
      seen.completion = { low: Math.min(seen.completion.low, completion), high: Math.max(seen.completion.high!, completion) };
    }
  }
  return roles;
}

function emptySpend(priced: boolean): SpendRange {
  return { tasks: 0, prompt_tokens: { low: 0, high: 0 }, completion_tokens: { low: 0, high: 0 }, cost_usd: priced ? { low: 0, high: 0 } : null };
}

function plus(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a + b;
}

function add(into: SpendRange, prompt: Range, completion: Range, cost: ((prompt: number, completion: number) => number) | undefined): void {
  into.tasks++;
  into.prompt_tokens = { low: into.prompt_tokens.low + prompt.low, high: plus(into.prompt_tokens.high, prompt.high) };
  into.completion_tokens = { low: into.completion_tokens.low + completion.low, high: plus(into.completion_tokens.high, completion.high) };
  if (into.cost_usd !== null && cost !== undefined) {
    const high = prompt.high === null || completion.high === null ? null : cost(prompt.high, completion.high);
    into.cost_usd = { low: into.cost_usd.low + cost(prompt.low, completion.low), high: plus(into.cost_usd.high, high) };
  }
}

function sumSpend(a: SpendRange, b: SpendRange): SpendRange {
  const range = (x: Range, y: Range): Range => ({ low: x.low + y.low, high: plus(x.high, y.high) });
  return {
    tasks: a.tasks + b.tasks,
    prompt_tokens: range(a.prompt_tokens, b.prompt_tokens),
    completion_tokens: range(a.completion_tokens, b.completion_tokens),
    cost_usd: a.cost_usd === null || b.cost_usd === null ? null : range(a.cost_usd, b.cost_usd),
  };
}

function assumptions(facts: {
  ratio: RunEstimate['chars_per_token'];
  roles: ReadonlyMap<string, RoleHistory>;
  agent: boolean;
  waits: boolean;
  /** Some task that executes is of a role without history. */
  newRoles: boolean;
  maxTokens: number | undefined;
  model: string;
  price: boolean;
  batch: boolean;
  discount: number | undefined;
}): string[] {
  const { ratio } = facts;
  const out: string[] = [];
  const fixed = (n: number) => n.toFixed(2);
  out.push(
    ratio.measured_requests > 0
      ? `prompt tokens: ${fixed(ratio.value)} characters per token, as the server counted ${ratio.measured_requests} request(s) of this session (usage.ndjson); the range takes ${fixed(ratio.low)} to ${fixed(ratio.high)}, the fewest and most it counted, widened by ${kMeasuredMargin * 100}%`
      : `prompt tokens: ${kDefaultCharsPerToken.value} characters per token (no request of this session recorded the server's count yet), in a range of ${kDefaultCharsPerToken.low} to ${kDefaultCharsPerToken.high}`,
  );
  if (facts.agent) out.push('an agent CLI adds its own instructions and tools to each prompt: a role with history counts the prompt tokens its attempts took; one without counts only the rendered prompt');
  const known = [...facts.roles].map(([role, history]) => `${role} (${history.attempts} attempt(s))`);
  out.push(
    known.length > 0
      ? `completion tokens: the fewest and most one attempt of the task's role took so far: ${known.join(', ')}`
      : 'completion tokens: no attempt of this session reported any yet',
  );
  if (facts.newRoles) {
    out.push(
      facts.maxTokens === undefined
        ? 'a role without history: 0 completion tokens at the least, and no upper bound (give --max-tokens for one)'
        : `a role without history: 0 to ${facts.maxTokens} completion tokens (--max-tokens)`,
    );
  }
  if (facts.waits) out.push("tasks that run after others: their prompts are filled with what is known now, and may grow to the most their role's prompts took");
  out.push('a repair request (after an unusable answer) is not counted: each sends the prompt again');
  if (!facts.price) out.push(`no price for model ${facts.model}: give session.json "pricing", or --price-input and --price-output`);
  else if (facts.batch) out.push(`--batch: the Batch API's discount of ${((facts.discount ?? 0) * 100).toFixed(0)}% is taken off`);
  return out;
}

/** A range as a person reads it: `1,200 to 1,500`, `1,200` when both ends agree, `1,200 or more` without a high end. */
export function rangeText(range: Range, format: (n: number) => string = (n) => n.toLocaleString('en-US')): string {
  if (range.high === null) return `${format(range.low)} or more`;
  if (range.high === range.low) return format(range.low);
  return `${format(range.low)} to ${format(range.high)}`;
}

/** The estimate in lines, as `csv-wave estimate` prints it. */
export function estimateLines(estimate: RunEstimate): string[] {
  const { tasks } = estimate;
  const lines = [
    `${tasks.run + tasks.after} task(s) would execute (${tasks.after} of them after others the run runs first), ${tasks.cached} from the cache, ${tasks.blocked} blocked by a failure, ${tasks.kept} kept as they are`,
  ];
  if (estimate.model === null) {
    lines.push(...estimate.assumptions);
    return lines;
  }
  const spend = (label: string, range: SpendRange | undefined) => {
    if (range === undefined || range.tasks === 0) return;
    const cost = range.cost_usd === null ? 'cost unknown' : rangeText(range.cost_usd, formatUsd);
    lines.push(`${label} (${range.tasks} task(s)): ${rangeText(range.prompt_tokens)} prompt tokens, ${rangeText(range.completion_tokens)} completion tokens, ${cost}`);
  };
  spend('Prompts known now', estimate.known);
  spend('After upstream results', estimate.after);
  spend(`Total for ${estimate.model}`, estimate.total);
  if (estimate.cached !== undefined) {
    const { cached } = estimate;
    const saved = cached.saved_usd === null ? 'cost unknown' : formatUsd(cached.saved_usd);
    lines.push(`From the cache (${cached.tasks} task(s)): ${(cached.prompt_tokens + cached.completion_tokens).toLocaleString('en-US')} tokens and ${saved} not spent`);
  }
  lines.push('Assumptions:', ...estimate.assumptions.map((line) => `  - ${line}`));
  return lines;
}
