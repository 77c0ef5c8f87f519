import type { ReplyRules } from '../executors/reply-rules.js';
import type { AttemptReply, AttemptRequest, CacheNote, FinishedAttempt } from '../executors/messages.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { requestCost } from '../knowledge/pricing.js';
import type { RequestUsage } from '../knowledge/usage.js';
import { SecretScrubber } from '../text/secret-scrubber.js';
import type { CachePolicy, CacheUse } from './cache-policy.js';
import type { CacheStore } from './cache-store.js';
import type { KeyMaker, TaskKey } from './task-key.js';

/** An attempt's key, and what the cache may do with it. */
export interface CachePlan extends TaskKey {
  use: CacheUse;
}

/** A result taken from the cache. */
export interface CacheHit {
  /** The cached reply, held to the rules of any reply; no tokens, no requests: nothing was spent. */
  reply: FinishedAttempt;
  /** What it cost when it was made, when known. */
  savedUsd: number | undefined;
}

/**
 * Holds a reply read from elsewhere to the checks and rules of any reply (the bullmq
 * backend's readJobReply): loaded only when the cache has entries to read, since it is
 * most of what the cache adds to a run's start.
 */
export type ReplyCheck = (value: unknown, taskId: string, rules: ReplyRules) => AttemptReply;

export interface ResultCacheSetup {
  store: CacheStore;
  /** The check of a cached reply; without it (an empty cache) every look-up misses. */
  checkReply?: ReplyCheck | undefined;
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
  /** The note of each completed result that has not reached its attempts.ndjson line yet, by task. */
  readonly #notes = new Map<string, CacheNote>();
  readonly #served = { tasks: 0, saved_usd: 0 };

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
    return { key: keyed.key, inputKey: keyed.inputKey, inputs: keyed.inputs, use: this.#setup.policy.use(attempt.task.id, attempt.task.row['role'] ?? '') };
  }

  /**
   * The cached result of the attempt, or undefined (a miss). An entry may come from a folder
   * other sessions share: its reply goes through the checks and rules of a reply from a
   * worker on another machine (schema, cleaning, secrets, caps, the role's rules), and one
   * they refuse is a miss, said.
   */
  lookup(plan: CachePlan, attempt: AttemptRequest): CacheHit | undefined {
    const { store, warn, checkReply } = this.#setup;
    if (!plan.use.read || checkReply === undefined || !store.has(plan.key)) return undefined;
    const entry = store.read(plan.key);
    if (entry === undefined) return undefined;
    const { id, row } = attempt.task;
    const rules = { pipeline: attempt.pipeline ?? 'generic', role: row['role'] ?? '', limits: attempt.limits ?? {}, secrets: this.#secrets };
    const checked = checkReply(entry.reply, id, rules);
    if (checked.kind !== 'finished' || checked.status !== 'completed') {
      warn(`cache: the entry ${plan.key.slice(0, 12)} of ${id} holds a result that does not check (${checked.kind === 'error' ? checked.error : 'not completed'}): not used, the task runs`);
      return undefined;
    }
    const { thread: _thread, usage: _usage, requests: _requests, ...reply } = checked;
    // `--cache read` writes nothing, its hits neither.
    if (plan.use.write) store.noteHit(plan.key);
    return { reply, savedUsd: entry.cost_usd ?? undefined };
  }

  /** Writes a completed result of the attempt when the policy allows it; failed results are never cached. */
  store(plan: CachePlan, taskId: string, reply: AttemptReply): void {
    if (!plan.use.write || reply.kind !== 'finished' || reply.status !== 'completed') return;
    // Where and how long it ran (its thread, the bullmq worker) is the attempt's, not the result's.
    const { thread: _thread, worker: _worker, usage: _usage, requests, ...kept } = reply;
    this.#setup.store.write(plan.key, taskId, plan.inputs, kept, requests ?? [], costOf(requests ?? [], this.#setup.pricing));
  }

  /**
   * Keeps the note of task `id`'s completed result (its key; whether it came from the cache)
   * until its finish is recorded (takeNote). Beside the reply, not in it: a reply that
   * changed shape on its way slowed every later step of a big run.
   */
  remember(id: string, plan: CachePlan, hit?: CacheHit): void {
    const input = plan.inputKey === plan.key ? {} : { inputKey: plan.inputKey };
    this.#notes.set(id, hit === undefined ? { key: plan.key, ...input } : { key: plan.key, ...input, cached: true, ...(hit.savedUsd === undefined ? {} : { savedUsd: hit.savedUsd }) });
  }

  /** The note of task `id`'s result, once, as its finish is recorded; a result from the cache is counted (served). */
  takeNote(id: string): CacheNote | undefined {
    const note = this.#notes.get(id);
    if (note === undefined) return undefined;
    this.#notes.delete(id);
    if (note.cached === true) {
      this.#served.tasks++;
      this.#served.saved_usd += note.savedUsd ?? 0;
    }
    return note;
  }

  /** The tasks whose result this run took from the cache, and what those results had cost. */
  get served(): { tasks: number; saved_usd: number } {
    return { ...this.#served };
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
