import { splitList } from '../core/id-list.js';
import { satisfiesDependents, skipCauseOf, skippedForFailure, statusOf } from '../core/skip-cause.js';
import type { TaskRow } from '../core/task.js';
import type { AttemptRequest } from '../executors/messages.js';
import type { RequestUsage } from '../knowledge/usage.js';
import { errorLine } from '../text/error-line.js';
import type { CachePolicy } from './cache-policy.js';
import type { CacheStore } from './cache-store.js';
import { attemptsNow, type KeyRun, type KeySession } from './session-keys.js';
import type { StaleTask } from './stale.js';
import { KeyMaker, type Uncacheable } from './task-key.js';

/**
 * Why a task that executes does not take a cached result: no entry has its inputs (`miss`),
 * the cache is off, its role says `"cache": false`, a rerun chose it, its inputs are known
 * only once tasks the run runs before it finish (`after`), or the cache never holds it.
 */
export type NoCache = 'miss' | 'off' | 'role-off' | 'forced' | 'after' | Uncacheable;

/** What the next `run` (or `resume`) does with one task, and why. */
export type NextStep =
  | { step: 'up-to-date' }
  /** Completed, but its inputs changed since: run and resume keep it, `rerun --stale` runs it. */
  | { step: 'stale'; changes: readonly string[] }
  /** It executes. `after`: the tasks the run runs first whose results it reads. */
  | { step: 'run'; interrupted: boolean; after: readonly string[]; noCache: NoCache }
  /** Its result comes from the cache: the entry made at `createdAt` (ISO 8601), which cost `savedUsd` (null: unknown). */
  | { step: 'cached'; createdAt: string; savedUsd: number | null; requests: readonly RequestUsage[] }
  /** A dependency failed (or was skipped for a failure): the run skips it. `by` is the root of the failure. */
  | { step: 'blocked'; by: string; byStatus: string }
  | { step: 'failed'; error: string }
  | { step: 'skipped'; error: string; forFailure: boolean }
  /** A run holds the session and runs it now. */
  | { step: 'running' };

export interface TaskPlan {
  id: string;
  role: string;
  next: NextStep;
}

/** The plan of the next run: one step per task, in the order of tasks.csv, and the attempt of each task that executes. */
export interface NextRun {
  tasks: TaskPlan[];
  /**
   * What each task that executes would be sent, built now as a run builds it: exact for a
   * task whose dependencies have their results, filled with what is known now for one that
   * runs `after` others. An interactive or worktree task has none.
   */
  attempts: ReadonlyMap<string, AttemptRequest>;
}

export interface NextRunSetup {
  /** The session as the run would start from it: the journal applied, interrupted tasks back to pending. */
  session: KeySession;
  run: KeyRun;
  /** The waves, to walk the tasks in an order where dependencies come first. */
  waves: ReadonlyMap<string, number>;
  /** The run's cache policy: its mode, the roles' `"cache": false`, the tasks a rerun forced. */
  policy: CachePolicy;
  store: CacheStore;
  /** The completed tasks whose inputs changed since their result was made (stale.ts). */
  stale: readonly StaleTask[];
  /** Tasks a killed run left in progress: they run again. */
  interrupted: ReadonlySet<string>;
  /** Tasks a run that holds the session runs now. */
  running: ReadonlySet<string>;
}

/**
 * What the next run would do with each task, worked out as the run decides it, without
 * running or writing anything: pending tasks run (interrupted ones too), unless a
 * dependency failed; the others keep their result. A pending task whose dependencies all
 * have their results gets its key now (the one a run computes: session-keys.ts), and takes
 * the cache's entry of that key when the policy lets it read. One source for `explain`,
 * `estimate` and `run --dry-run` (docs/cache.md).
 */
export function planNextRun(setup: NextRunSetup): NextRun {
  const { session, run, policy, store } = setup;
  const byId = new Map(session.rows.map((row) => [row.id, row]));
  const stale = new Map(setup.stale.map((task) => [task.id, task.changes]));
  const steps = new Map<string, NextStep>();
  const pending = session.rows.filter((row) => statusOf(row) === 'pending' && !setup.running.has(row.id));
  const attempts = attemptsNow(session, run, pending.map((row) => row.id));
  const keys = new KeyMaker({ sessionDir: session.dir, lookup: (id) => byId.get(id) });
  const wave = (row: TaskRow) => setup.waves.get(row.id) ?? 0;
  // Dependencies first: a task is blocked by a dependency blocked before it.
  for (const row of [...session.rows].sort((a, b) => wave(a) - wave(b))) {
    if (setup.running.has(row.id)) {
      steps.set(row.id, { step: 'running' });
      continue;
    }
    switch (statusOf(row)) {
      case 'completed': {
        const changes = stale.get(row.id);
        steps.set(row.id, changes === undefined ? { step: 'up-to-date' } : { step: 'stale', changes });
        continue;
      }
      case 'failed':
        steps.set(row.id, { step: 'failed', error: errorLine(row.error) });
        continue;
      case 'skipped':
        steps.set(row.id, { step: 'skipped', error: errorLine(row.error), forFailure: skippedForFailure(row) });
        continue;
      default:
        break;
    }
    const blocker = blockerOf(row, byId, steps);
    if (blocker !== undefined) {
      steps.set(row.id, { step: 'blocked', ...blocker });
      continue;
    }
    const interrupted = setup.interrupted.has(row.id);
    // The tasks it reads (dependencies, context sources) that the run gives a result first: its inputs are not known yet.
    const after = [...new Set([...splitList(row.deps), ...splitList(row.context_from)])].filter((id) => {
      const step = steps.get(id)?.step;
      return step === 'run' || step === 'cached' || step === 'running';
    });
    const runs = (noCache: NoCache): NextStep => ({ step: 'run', interrupted, after, noCache });
    if (after.length > 0) {
      steps.set(row.id, runs(policy.mode === 'off' ? 'off' : 'after'));
      continue;
    }
    steps.set(row.id, cacheStep(row, attempts.get(row.id), policy, keys, store, runs));
  }
  const ran = new Map<string, AttemptRequest>();
  for (const [id, attempt] of attempts) if (!('uncacheable' in attempt) && steps.get(id)?.step === 'run') ran.set(id, attempt);
  return { tasks: session.rows.map((row) => ({ id: row.id, role: row.role, next: steps.get(row.id)! })), attempts: ran };
}

/** A ready task: from the cache when the policy reads and an entry of its key checks; else it runs, with why. */
function cacheStep(
  row: TaskRow,
  attempt: AttemptRequest | Uncacheable | undefined,
  policy: CachePolicy,
  keys: KeyMaker,
  store: CacheStore,
  runs: (noCache: NoCache) => NextStep,
): NextStep {
  if (policy.mode === 'off') return runs('off');
  if (policy.roleOff(row.role)) return runs('role-off');
  if (policy.forced(row.id)) return runs('forced');
  if (attempt === undefined) return runs('miss');
  if ('uncacheable' in attempt) return runs(attempt);
  let key: string;
  try {
    const made = keys.keyOf(attempt);
    if ('uncacheable' in made) return runs(made);
    key = made.key;
  } catch (error) {
    // The run says the same and runs the task without the cache (task-runner.ts).
    return runs({ uncacheable: `it has no key (${error instanceof Error ? error.message : String(error)})` });
  }
  const entry = store.has(key) ? store.read(key) : undefined;
  if (entry === undefined || entry.reply.status !== 'completed') return runs('miss');
  return { step: 'cached', createdAt: entry.created_at, savedUsd: entry.cost_usd, requests: entry.requests };
}

/** The root failure that makes the run skip a pending task, if one of its dependencies has one. */
function blockerOf(row: TaskRow, byId: ReadonlyMap<string, TaskRow>, steps: ReadonlyMap<string, NextStep>): { by: string; byStatus: string } | undefined {
  for (const id of splitList(row.deps)) {
    const step = steps.get(id);
    if (step?.step === 'blocked') return { by: step.by, byStatus: step.byStatus };
    const dep = byId.get(id);
    if (dep === undefined || statusOf(dep) === 'pending' || statusOf(dep) === 'in_progress' || satisfiesDependents(dep)) continue;
    // A skip for a failure names its root: `Dependency failed or skipped: W2-04 (failed)`.
    const cause = skipCauseOf(dep);
    const root = cause?.kind === 'dependency' ? /: (\S+) \((\w+)\)$/.exec(cause.error) : null;
    return root === null ? { by: id, byStatus: statusOf(dep) } : { by: root[1]!, byStatus: root[2]! };
  }
  return undefined;
}

/** The minute a result was made, as explain says it: `2026-12-01T10:02Z`. */
function minuteOf(iso: string): string {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(iso) ? `${iso.slice(0, 16)}Z` : iso;
}

/**
 * One task's step in words (docs/cache.md, "Explain"): `up to date`, `will run: pending`,
 * `will run: stale …`, `from cache: same inputs as the result of 2026-12-01T10:02Z`,
 * `blocked by CHALLENGE-001 (failed)`.
 */
export function explainLine(task: TaskPlan): string {
  const next = task.next;
  switch (next.step) {
    case 'up-to-date':
      return 'up to date';
    case 'stale':
      return `stale (${next.changes.join('; ')}): run and resume keep its result; rerun --stale runs it again`;
    case 'cached':
      return `from cache: same inputs as the result of ${minuteOf(next.createdAt)}`;
    case 'blocked':
      return `blocked by ${next.by} (${next.byStatus})`;
    case 'failed':
      return `failed (${next.error}): run and resume leave it; rerun --failed runs it again`;
    case 'skipped':
      return next.forFailure
        ? `skipped (${next.error}): run and resume leave it; rerun --failed runs it again`
        : `skipped (${next.error}): run and resume leave it`;
    case 'running':
      return 'running now, in the run that holds the session';
    case 'run': {
      const what = `will run: ${next.interrupted ? 'interrupted (its run was stopped before it finished)' : 'pending'}`;
      return `${what}${noCacheWords(next.noCache, task.role, next.after)}`;
    }
  }
}

function noCacheWords(noCache: NoCache, role: string, after: readonly string[]): string {
  if (typeof noCache === 'object') return ` (never from the cache: ${noCache.uncacheable})`;
  switch (noCache) {
    case 'miss':
      return '';
    case 'off':
      return ' (the cache is off)';
    case 'role-off':
      return ` (never from the cache: role ${role} has "cache": false)`;
    case 'forced':
      return ' (a rerun chose it: it executes whatever the cache holds)';
    case 'after':
      return `, after ${after.join(', ')} (from the cache if their results leave its inputs as they were)`;
  }
}

/** How many tasks of the plan take each way. */
export function countSteps(plan: NextRun): { run: number; after: number; cached: number; blocked: number; kept: number } {
  const counts = { run: 0, after: 0, cached: 0, blocked: 0, kept: 0 };
  for (const { next } of plan.tasks) {
    if (next.step === 'run') counts[next.after.length > 0 ? 'after' : 'run']++;
    else if (next.step === 'cached') counts.cached++;
    else if (next.step === 'blocked') counts.blocked++;
    else if (next.step !== 'running') counts.kept++;
  }
  return counts;
}
