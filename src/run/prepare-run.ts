import type { BackendChoice } from '../backend/index.js';
import type { TaskRow } from '../core/task.js';
import { showCell } from '../csv/columns.js';
import { WaveError } from '../errors.js';
import { isAgentKind } from '../executors/agents/settings.js';
import type { PipelineName } from '../schema/session.js';
import { pipelineFor, SettingsReader, type PipelineSettings } from '../pipelines/index.js';
import { checkAgentSettings } from '../options/agent-settings-check.js';
import { checkExecutor } from './check-executor.js';
import { normalizeRunOptions, type NormalizedRunOptions, type RunOptions } from '../options/options.js';
import { fillWaveColumn } from '../core/wave-column.js';
import { planTasks, prepareSession, writeFirst, type HeldSession, type ReadSession } from '../session/prepare-session.js';
import { recoverRows } from '../session/journal.js';
import { checkSessionOwner } from '../session/session-owner.js';
import { openSession, type Session } from '../session/session.js';
import { readLastRun } from '../cache/last-run.js';
import { kLayout } from '../layout.js';
import { kRedacted } from '../text/secret-scrubber.js';
import type { ExecutorSpec } from '../executors/messages.js';
import type { TaskPlan } from '../session/validate.js';
import { sessionIdOf } from '../session/files/session-id.js';
import { checkWorktreeRun, runWorkdir, type RunWorkdir } from './workdir/workdir-setup.js';
import { planRerun, resetTasks, type RerunPlan, type RerunSelection } from '../commands/rerun.js';
import { staleTasks, recordedKeys, type StaleTask } from '../cache/stale.js';
import { readAttempts } from '../knowledge/attempt-lines.js';
import { readForcedTasks, writeForcedTasks } from '../cache/forced-tasks.js';
import { SessionWriter } from '../session/files/session-writer.js';
import { CacheFolder } from '../session/files/cache-folder.js';
import { CacheStore } from '../cache/cache-store.js';
import { statusOf } from '../core/skip-cause.js';
import { CachePolicy } from '../cache/cache-policy.js';
import { planNextRun, type NextRun } from '../cache/next-run.js';
import { runHoldsLock } from '../session/lock.js';
import { readSessionContracts, type SessionContracts } from '../dynamic/session-contracts.js';

/** What a run is asked to do (the fields of RunSessionOptions that preparing it reads). */
export interface RunRequest extends RunOptions {
  pipeline?: PipelineName;
  /** Where attempts run: on workers (bullmq), the agents' logins are theirs. @default session.json's `backend`, else local */
  backend?: BackendChoice | undefined;
  prepare?: (rows: TaskRow[], waves: ReadonlyMap<string, number>) => void | Iterable<string>;
  /**
   * A rerun (`csv-wave rerun`): the tasks it chooses and their dependents go back to pending
   * before the run; the chosen ones execute whatever the cache holds, the others may take a
   * cached result (docs/cache.md).
   */
  rerun?: RerunSelection;
}

export interface PreparedRun extends HeldSession {
  /** The run's options, session.json's filling what the caller left out. */
  settings: NormalizedRunOptions;
  /** The pipeline's own settings from session.json (topic, mode, …), checked before anything runs. */
  pipelineSettings: PipelineSettings;
  plan: TaskPlan;
  /** The tasks `prepare` said it reset: they run afresh, without a job an interrupted run left for them. */
  reset: ReadonlySet<string>;
  /** Where the tasks work when not in the session folder (--workdir task|worktree), checked before any task. */
  workdir?: RunWorkdir;
  /** With `rerun`: what it reset, and the stale tasks it found (`--stale`). */
  rerun?: RerunPlan & { stale: StaleTask[] };
  /** The artifact registry, the injection rules, the validator roles and the branches (dynamic/), checked before any task. */
  contracts: SessionContracts;
}

/**
 * Everything before a run's first task: options settled, the session held and brought up
 * to date, the tasks validated, the executor checked, the waves filled in and tasks.csv
 * written once. The caller releases the lock; a run refused here has released it, and
 * before the first write it leaves the folder as it was. `beforeWrite` is the caller's
 * last word before that write: what it throws refuses the run.
 */
export async function prepareRun(
  path: string,
  request: RunRequest,
  warn: (message: string) => void,
  beforeWrite?: (settings: NormalizedRunOptions, session: Session) => Promise<void>,
): Promise<PreparedRun> {
  const session = openSession(path, request.pipeline === undefined ? {} : { pipeline: request.pipeline });
  const settings = normalizeRunOptions(withLastExecutor(request, session, warn), session);
  const held = prepareSession(session, { hold: { warn, run: true }, bom: settings.bom ?? session.config.bom });
  try {
    const plan = planTasks(held);
    // A plain batch needs no description, but a prompt does: a model or agent task without one is refused at its row.
    if (settings.executor.type === 'openai' || isAgentKind(settings.executor.type)) {
      const violations = held.table.rows.filter((row) => row.description.trim() === '').map((row) => ({ line: row.line, message: `Empty description for task: ${showCell(row.id)} (a ${settings.executor.type} task's prompt is its description)` }));
      if (violations.length > 0) throw new WaveError('INVALID_TASKS', `${violations.length} problem(s) in ${session.displayPath}`, { path: session.displayPath, violations });
    }
    const { config, configFile } = held.session;
    const pipelineSettings = pipelineFor(config.pipeline).settings(SettingsReader.of(config.pipeline, config, configFile));
    // A hand-edited or copied artifact-registry.json, or an injection rule that does not fit, stops here (exit 2).
    const contracts = readSessionContracts(session.dir, config.pipeline, config, configFile);
    // A bad executor fails here, once, rather than on every task; so do bad agent settings of roles and rows.
    const agents = checkAgentSettings(settings.executor, held.table.rows, { tasks: session.displayPath, ...(configFile === undefined ? {} : { session: configFile }) }, config.pipeline);
    // On workers (--backend bullmq) the agents run with the workers' logins, which each worker checks when it starts.
    const onWorkers = (request.backend ?? config.backend)?.type === 'bullmq';
    await checkExecutor(settings.executor, held.table.columns, session.dir, undefined, agents, { runHere: !onWorkers });
    // A worktree run outside a repository, from a base that names no commit, or with a task id no branch can take, stops here (exit 2).
    const repository =
      settings.workdir === 'worktree' ? await checkWorktreeRun(session.dir, settings.base, held.table.rows.map((row) => row.id)) : undefined;
    const workdir = runWorkdir(settings.workdir, repository, () => sessionIdOf(session.dir, warn), settings.keepWorktrees);
    fillWaveColumn(held.table.rows, plan.waves);
    const reset = new Set(request.prepare?.(held.table.rows, plan.waves) ?? []);
    const rerun = request.rerun === undefined ? undefined : rerunPlan(held, settings, pipelineSettings.topic, plan.waves, request.rerun, warn);
    for (const id of [...(rerun?.chosen ?? []), ...(rerun?.cascaded ?? [])]) reset.add(id);
    // What the backend would refuse (bullmq's session id held elsewhere, --batch with bullmq) is refused before the first write.
    await beforeWrite?.(settings, held.session);
    // A person watching the spreadsheet sees `pending`, not an empty cell, once the run has started.
    for (const row of held.table.rows) if (row.status === '') row.status = 'pending';
    writeFirst(held, {
      // Saved between our read and this write: nothing ran yet, and the journal (if any) stays.
      edited: `${session.displayPath} was changed by someone else while csv-wave was reading it; nothing was run. Run the command again.`,
      failed:
        `Nothing was run; tasks.csv and the journal were left as they were. ` +
        `Free some space (or make the folder writable) and run \`csv-wave resume ${path}\`.`,
    });
    // The tasks a rerun chose execute anew even if it is interrupted and resumed.
    if (rerun !== undefined) rememberForced(held, rerun.forced);
    return { ...held, settings, pipelineSettings, plan, reset, contracts, ...(workdir === undefined ? {} : { workdir }), ...(rerun === undefined ? {} : { rerun }) };
  } catch (error) {
    held.lock.release();
    throw error;
  }
}

/**
 * What a rerun would reset, without the lock and without writing anything (`rerun
 * --dry-run`): the session brought up to date by the journal, the stale tasks found with
 * the rerun's own settings.
 */
export function previewRerun(path: string, request: RunRequest, selection: RerunSelection, warn: (message: string) => void): RerunPlan & { stale: StaleTask[] } {
  const session = openSession(path, request.pipeline === undefined ? {} : { pipeline: request.pipeline });
  const held = prepareSession(session);
  checkSessionOwner(held.session);
  recoverRows(held.table.rows, held.session.dir);
  const plan = planTasks(held);
  const { config, configFile } = held.session;
  const settings = selection.stale === true ? normalizeRunOptions(request, session) : undefined;
  const topic = settings === undefined ? '' : pipelineFor(config.pipeline).settings(SettingsReader.of(config.pipeline, config, configFile)).topic;
  return rerunPlan(held, settings, topic, plan.waves, selection, warn);
}

/** What the next run would do (previewRun): its plan, and what it would run with. */
export interface RunPreview {
  /** The session folder. */
  dir: string;
  plan: NextRun;
  settings: NormalizedRunOptions;
  /** The session's rows as the run would start from them, every task of usage.ndjson's history among them. */
  rows: readonly TaskRow[];
}

/**
 * What the next `run` (or `resume`) would do with each task, without the lock and without
 * writing anything (`explain`, `estimate`, `run --dry-run`): the session brought up to date
 * by the journal as a run brings it, the run's options settled as a run settles them (the
 * last run's executor when none is named), the cache's policy as the run would open it.
 */
export function previewRun(path: string, request: RunRequest, warn: (message: string) => void): RunPreview {
  const session = openSession(path, request.pipeline === undefined ? {} : { pipeline: request.pipeline });
  const settings = normalizeRunOptions(withLastExecutor(request, session, warn), session);
  const held = prepareSession(session);
  checkSessionOwner(held.session);
  const rows = held.table.rows;
  // Left in progress: by a run that holds the session and runs them now, or by one that was stopped.
  const outNow = new Set(rows.filter((row) => row.status === 'in_progress').map((row) => row.id));
  const running = runHoldsLock(session.dir) ? outNow : new Set<string>();
  recoverRows(rows, held.session.dir);
  for (const id of running) rows.find((row) => row.id === id)!.status = 'in_progress';
  const plan = planTasks(held);
  const { config, configFile } = held.session;
  const topic = pipelineFor(config.pipeline).settings(SettingsReader.of(config.pipeline, config, configFile)).topic;
  const keySession = { dir: session.dir, pipeline: config.pipeline, topic, rows };
  const run = {
    executor: settings.executor,
    workdir: settings.workdir,
    limits: { maxStdoutBytes: settings.maxStdoutBytes, maxArtifactsPerTask: settings.maxArtifactsPerTask, maxArtifactBytes: settings.maxArtifactBytes },
    prevContextCap: settings.prevContextCap,
  };
  const waiting = new Set(rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
  const forced = new Set(readForcedTasks(session.dir).filter((id) => waiting.has(id)));
  const policy = new CachePolicy({ cache: settings.cache, ...(config.roles === undefined ? {} : { roles: config.roles }), forced });
  const store = new CacheStore(CacheFolder.of(session.dir, config.cache_dir), warn);
  const stale = staleTasks(keySession, run, recordedKeys(readAttempts(session.dir)), store);
  const interrupted = new Set([...outNow].filter((id) => !running.has(id)));
  return { dir: session.dir, plan: planNextRun({ session: keySession, run, waves: plan.waves, policy, store, stale, interrupted, running }), settings, rows };
}

/** Resets the tasks a rerun chooses and their dependents; with `--stale`, the stale tasks found first. */
function rerunPlan(
  held: ReadSession,
  settings: NormalizedRunOptions | undefined,
  topic: string,
  waves: ReadonlyMap<string, number>,
  selection: RerunSelection,
  warn: (message: string) => void,
): RerunPlan & { stale: StaleTask[] } {
  const { session, table } = held;
  let stale: StaleTask[] = [];
  if (selection.stale === true && settings !== undefined) {
    const run = {
      executor: settings.executor,
      workdir: settings.workdir,
      limits: { maxStdoutBytes: settings.maxStdoutBytes, maxArtifactsPerTask: settings.maxArtifactsPerTask, maxArtifactBytes: settings.maxArtifactBytes },
      prevContextCap: settings.prevContextCap,
    };
    const store = new CacheStore(CacheFolder.of(session.dir, session.config.cache_dir), warn);
    stale = staleTasks({ dir: session.dir, pipeline: session.config.pipeline, topic, rows: table.rows }, run, recordedKeys(readAttempts(session.dir)), store);
  }
  const plan = planRerun(table.rows, waves, { ...selection, staleIds: new Set(stale.map((task) => task.id)) });
  resetTasks(table.rows, [...plan.chosen, ...plan.cascaded]);
  return { ...plan, stale };
}

/** The rerun's forced tasks, with those an interrupted rerun forced that are still to run, in `.csv-wave/forced.json`. */
function rememberForced(held: HeldSession, forced: readonly string[]): void {
  const pending = new Set(held.table.rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
  const earlier = readForcedTasks(held.session.dir).filter((id) => pending.has(id));
  const all = [...new Set([...earlier, ...forced])];
  if (all.length > 0 || earlier.length > 0) writeForcedTasks(new SessionWriter(held.session.dir), all);
}

/**
 * A run that names no executor, of a session whose session.json names none, runs with the
 * executor of the session's last run (`.csv-wave/last-run.json`), and says so: `rerun
 * --failed` after `run --cmd '…'` runs the same command. A recorded executor that held a
 * secret (scrubbed to `***` there) is not taken: it would not be the same one.
 */
function withLastExecutor(request: RunRequest, session: Session, warn: (message: string) => void): RunRequest {
  if (request.executor !== undefined || session.config.executor !== undefined) return request;
  const last = readLastRun(session.dir);
  if (last === undefined || JSON.stringify(last.executor).includes(kRedacted)) return request;
  warn(`No executor given: this run uses the last run's (${executorFlags(last.executor)}), recorded in ${kLayout.lastRun}`);
  return { ...request, executor: last.executor };
}

/** An executor as the flags that name it. */
function executorFlags(executor: ExecutorSpec): string {
  const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  switch (executor.type) {
    case 'command':
      return `--cmd ${quoted(executor.template)}`;
    case 'module':
      return `--module ${quoted(executor.path)}`;
    default:
      return `--executor ${executor.type} --model ${quoted(executor.model)}${executor.baseUrl === undefined ? '' : ` --base-url ${executor.baseUrl}`}`;
  }
}
