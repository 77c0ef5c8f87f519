import { kTaskIdPattern } from '../schema/row.js';

/**
 * The most tokens one request may report: far past any model's context window. A larger
 * count is an edit or a forgery, not a request, and would swamp every sum it is added to.
 */
export const kMaxRequestTokens = 100_000_000;
/** The most one request may cost, in US dollars: no price makes a request cost more. */
export const kMaxRequestCostUsd = 1_000_000;
/** Longest model name, batch id or custom_id a line may hold (csv-wave writes far shorter ones). */
const kMaxNameChars = 200;

/** What a line of usage.ndjson counts for, once checked. */
export interface CountedLine {
  task: string;
  model: string | undefined;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** The line's own price, when the run that wrote it knew one. */
  cost_usd: number | undefined;
  batch: boolean;
  /**
   * What makes the line the one record of one request: the batch line that answered it
   * (batch_id and custom_id; a batch line is billed once), else its time, task, attempt
   * and request number. Undefined for a line without them (a hand-made one).
   */
  identity: string | undefined;
  /** Whether the identity is a batch line's. */
  byBatchLine: boolean;
  /** The attempt and the request's kind, when the line says them (estimate groups a role's attempts). */
  attempt: number | undefined;
  kind: string | undefined;
  /** Characters of the messages sent, when the line says them (RequestUsage.prompt_chars). */
  prompt_chars: number | undefined;
}

/**
 * Checks one line of usage.ndjson as a reader must take it: from a file anyone may have
 * edited, cut short or forged. Counts are whole numbers from 0 to kMaxRequestTokens (a
 * string, a fraction, a negative count is no count: a line can not take spent tokens away),
 * the task is a task id, a cost is a number of dollars from 0 to kMaxRequestCostUsd.
 * Returns the line, or what is wrong with it (a problem to report, the line not counted).
 */
export function checkUsageLine(text: string): CountedLine | { problem: string } {
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return { problem: 'not JSON (cut short by a crash or a full disk, or edited by hand)' };
  }
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return { problem: 'not a JSON object' };
  const given = entry as Record<string, unknown>;
  const problem = (field: string, expected: string) => ({ problem: `${field} is ${shown(given[field])}, not ${expected}` });

  const task = given['task'];
  if (typeof task !== 'string' || !kTaskIdPattern.test(task)) return problem('task', 'a task id');
  const counts: Record<'prompt_tokens' | 'completion_tokens' | 'cached_tokens', number> = { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 };
  for (const field of ['prompt_tokens', 'completion_tokens', 'cached_tokens'] as const) {
    const value = given[field];
    // cached_tokens came later: a line without it has none.
    if (value === undefined && field === 'cached_tokens') continue;
    if (!isCount(value)) return problem(field, `a whole number of tokens from 0 to ${kMaxRequestTokens}`);
    counts[field] = value;
  }
  const cost = given['cost_usd'];
  if (cost !== undefined && !(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 && cost <= kMaxRequestCostUsd)) {
    return problem('cost_usd', `a number of US dollars from 0 to ${kMaxRequestCostUsd}`);
  }
  for (const field of ['model', 'ts', 'batch_id', 'custom_id'] as const) {
    const value = given[field];
    if (value !== undefined && !(typeof value === 'string' && value.length <= kMaxNameChars)) return problem(field, `a text of at most ${kMaxNameChars} characters`);
  }
  for (const field of ['attempt', 'request'] as const) {
    const value = given[field];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 1)) return problem(field, 'a whole number from 1');
  }
  if (given['batch'] !== undefined && typeof given['batch'] !== 'boolean') return problem('batch', 'true or false');
  const chars = given['prompt_chars'];
  if (chars !== undefined && !isCount(chars)) return problem('prompt_chars', `a whole number of characters from 0 to ${kMaxRequestTokens}`);

  const { model, ts, batch_id: batchId, custom_id: customId, attempt, request } = given as Partial<Record<string, string | number>>;
  let identity: string | undefined;
  if (typeof batchId === 'string' && typeof customId === 'string') identity = batchIdentity(batchId, customId);
  else if (typeof ts === 'string' && attempt !== undefined && request !== undefined) identity = `request ${ts} ${task} ${attempt} ${request}`;
  return {
    task,
    model: typeof model === 'string' ? model : undefined,
    ...counts,
    cost_usd: cost as number | undefined,
    batch: given['batch'] === true,
    identity,
    byBatchLine: typeof batchId === 'string' && typeof customId === 'string',
    attempt: typeof attempt === 'number' ? attempt : undefined,
    kind: typeof given['kind'] === 'string' ? given['kind'] : undefined,
    prompt_chars: chars as number | undefined,
  };
}

/** The identity of a line answered by this batch line (CountedLine.identity). */
export function batchIdentity(batchId: string, customId: string): string {
  return `batch ${batchId} ${customId}`;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= kMaxRequestTokens;
}

/** A value as a problem shows it: JSON, short, with no character a terminal would act on. */
function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value) ?? String(value);
  const cut = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  // JSON escapes C0 controls; C1 controls (CSI among them) and DEL it leaves as they are.
  return cut.replace(/[\u007f-\u009f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
