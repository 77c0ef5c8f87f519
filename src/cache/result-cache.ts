import { readJobReply } from '../backend/bullmq/trust/reply-schema.js';
import type { AttemptReply, AttemptRequest, CacheNote, FinishedAttempt } from '../executors/messages.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { requestCost } from '../knowledge/pricing.js';
import type { RequestUsage } from '../knowledge/usage.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import type { CachePolicy, CacheUse } from './cache-policy.js';
import type { CacheStore } from './cache-store.js';
import { kCacheFormat, shortHash, type KeyMaker } from './task-key.js';

/** An attempt's key, and what the cache may do with it. */
export interface CachePlan {
  key: string;
  parts: Record<string, string>;
  use: CacheUse;
}

/** A result taken from the cache. */
export interface CacheHit {
  /** The cached reply, held to the rules of any reply; no tokens, no requests: nothing was spent. */
  reply: FinishedAttempt;
  /** What it cost when it was made, when known. */
  savedUsd: number | undefined;
}

export interface ResultCacheSetup {
  store: CacheStore;
  keys: KeyMaker;
  policy: CachePolicy;
  /** Prices by model: a result's cost, recorded in its entry. */
  pricing: PriceTable;
  warn: (message: string) => void;
}

/**
 * The result cache as a run uses it, in front of its backend (run/task-runner.ts): each
 * attempt's key and what the policy allows, a look-up before the attempt is sent, and the
 * completed result written after. docs/cache.md.
 */
export class ResultCache {
  readonly #setup: ResultCacheSetup;
  readonly #secrets = SecretScrubber.fromEnv();

  constructor(setup: ResultCacheSetup) {
    this.#setup = setup;
  }

  get policy(): CachePolicy {
    return this.#setup.policy;
  }

  /** The attempt's key and what the cache may do for it; undefined for a task the cache never holds (a worktree task). */
  plan(attempt: AttemptRequest): CachePlan | undefined {
    const keyed = this.#setup.keys.keyOf(attempt);
    if ('uncacheable' in keyed) return undefined;
    return { key: keyed.key, parts: keyed.parts, use: this.#setup.policy.use(attempt.task.id, attempt.task.row['role'] ?? '') };
  }

  /**
   * The cached result of the attempt, or undefined (a miss). An entry may come from a folder
   * other sessions share: its reply goes through the checks and rules of a reply from a
   * worker on another machine (schema, cleaning, secrets, caps, the role's rules), and one
   * they refuse is a miss, said.
   */
  lookup(plan: CachePlan, attempt: AttemptRequest): CacheHit | undefined {
    const { store, warn } = this.#setup;
    if (!plan.use.read || !store.has(plan.key)) return undefined;
    const entry = store.read(plan.key);
    if (entry === undefined) return undefined;
    const { id, row } = attempt.task;
    const rules = { pipeline: attempt.pipeline ?? 'generic', role: row['role'] ?? '', limits: attempt.limits ?? {}, secrets: this.#secrets };
    const checked = readJobReply(entry.reply, id, rules);
    if (checked.kind !== 'finished' || checked.status !== 'completed') {
      warn(`cache: the entry ${plan.key.slice(0, 12)} of ${id} holds a result that does not check (${checked.kind === 'error' ? checked.error : 'not completed'}): not used, the task runs`);
      return undefined;
    }
    const { thread: _thread, usage: _usage, requests: _requests, ...reply } = checked;
    return { reply, savedUsd: entry.cost_usd ?? undefined };
  }

  /** Writes a completed result of the attempt when the policy allows it; failed results are never cached. */
  store(plan: CachePlan, taskId: string, reply: AttemptReply): void {
    if (!plan.use.write || reply.kind !== 'finished' || reply.status !== 'completed') return;
    const { thread: _thread, usage: _usage, requests, cache: _cache, ...kept } = reply;
    this.#setup.store.write({
      format: kCacheFormat,
      key: plan.key,
      task: taskId,
      created_at: new Date().toISOString(),
      parts: plan.parts,
      reply: kept,
      requests: requests ?? [],
      cost_usd: costOf(requests ?? [], this.#setup.pricing),
    });
  }

  /** The note a completed result carries to its attempts.ndjson line. */
  note(plan: CachePlan, hit?: CacheHit): CacheNote {
    const parts: Record<string, string> = {};
    for (const name in plan.parts) parts[name] = shortHash(plan.parts[name]!);
    if (hit === undefined) return { key: plan.key, parts };
    return { key: plan.key, parts, cached: true, ...(hit.savedUsd === undefined ? {} : { savedUsd: hit.savedUsd }) };
  }

  /** Appends what is pending (at each wave's end). */
  flush(): void {
    this.#setup.store.flush();
  }

  close(): void {
    this.#setup.store.close();
  }
}

/** What an attempt's requests cost: the CLI's own figure, else the price table's; null when one with tokens has neither. */
export function costOf(requests: readonly RequestUsage[], pricing: PriceTable): number | null {
  let sum = 0;
  for (const request of requests) {
    if (request.cost_usd !== undefined) {
      sum += request.cost_usd;
      continue;
    }
    const price = Object.hasOwn(pricing, request.model) ? pricing[request.model] : undefined;
    if (price !== undefined && request.reported) sum += requestCost(price, request);
    else if (request.prompt_tokens + request.completion_tokens > 0) return null;
  }
  return sum;
}
