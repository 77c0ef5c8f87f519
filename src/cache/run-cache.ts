import { statusOf } from '../core/skip-cause.js';
import type { TaskRow } from '../core/task.js';
import type { TaskLimits } from '../executors/messages.js';
import type { SessionFileWriter } from '../layout.js';
import type { NormalizedRunOptions } from '../options/options.js';
import { CacheFolder } from '../session/files/cache-folder.js';
import type { SettledSession } from '../session/session.js';
import { CachePolicy } from './cache-policy.js';
import { CacheStore } from './cache-store.js';
import { readForcedTasks, writeForcedTasks } from './forced-tasks.js';
import { recordLastRun } from './last-run.js';
import { ResultCache } from './result-cache.js';
import { KeyMaker } from './task-key.js';

export interface RunCacheSetup {
  session: SettledSession;
  settings: NormalizedRunOptions;
  /** The session's writer: the last run's record and the forced tasks go through it. */
  files: SessionFileWriter;
  limits: TaskLimits;
  /** The tasks the run set out to run (pending when it started). */
  runIds: ReadonlySet<string>;
  /** The run's rows by id: a key reads its context sources' findings. */
  lookup: (id: string) => TaskRow | undefined;
  warn: (message: string) => void;
}

/**
 * The result cache of one run: its folder (`.csv-wave/cache/`, or session.json's
 * `cache_dir`), the policy (the run's `cache` option, the roles' `"cache": false`, the
 * tasks a rerun forced that are still to run) and the keys. Also records what the run runs
 * with (`.csv-wave/last-run.json`), from which `status` computes the keys a run would.
 * Keys are computed and recorded whatever the mode, so that status can tell stale tasks.
 */
export async function openRunCache(setup: RunCacheSetup): Promise<ResultCache> {
  const { session, settings, files, limits, warn } = setup;
  // A run with nothing to run writes nothing: the record stays that of the run whose results the session holds.
  if (setup.runIds.size > 0) recordLastRun(files, { executor: settings.executor, workdir: settings.workdir, limits, prev_context_cap: settings.prevContextCap });
  const forced = new Set(readForcedTasks(session.dir).filter((id) => setup.runIds.has(id)));
  const policy = new CachePolicy({ cache: settings.cache, ...(session.config.roles === undefined ? {} : { roles: session.config.roles }), forced });
  const store = new CacheStore(CacheFolder.of(session.dir, session.config.cache_dir), warn);
  // The check of cached replies is loaded only when there is something to read: a run's entries are not read by itself.
  const checkReply = policy.mode === 'off' || store.isEmpty() ? undefined : (await import('../backend/bullmq/trust/reply-schema.js')).readJobReply;
  return new ResultCache({
    store,
    checkReply,
    keys: new KeyMaker({ sessionDir: session.dir, lookup: setup.lookup }),
    policy,
    pricing: settings.pricing,
    warn,
  });
}

/**
 * When a run ends: the forced tasks that ran leave `.csv-wave/forced.json`, which keeps
 * those still pending (a run stopped early) for the next. Written only when it lists some.
 */
export function forgetForcedThatRan(files: SessionFileWriter, rows: readonly TaskRow[], warn: (message: string) => void): void {
  const listed = readForcedTasks(files.dir);
  if (listed.length === 0) return;
  const waiting = new Set(rows.filter((row) => statusOf(row) === 'pending' || statusOf(row) === 'in_progress').map((row) => row.id));
  try {
    writeForcedTasks(files, listed.filter((id) => waiting.has(id)));
  } catch (error) {
    warn(`.csv-wave/forced.json was not updated (${error instanceof Error ? error.message : String(error)}): a later run may execute again tasks this rerun ran`);
  }
}
