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
import { planTasks, prepareSession, writeFirst, type HeldSession } from '../session/prepare-session.js';
import { openSession } from '../session/session.js';
import type { TaskPlan } from '../session/validate.js';
import { sessionIdOf } from '../session/files/session-id.js';
import { checkWorktreeRun, runWorkdir, type RunWorkdir } from './workdir/workdir-setup.js';
import { readSessionContracts, type SessionContracts } from '../dynamic/session-contracts.js';

/** What a run is asked to do (the fields of RunSessionOptions that preparing it reads). */
export interface RunRequest extends RunOptions {
  pipeline?: PipelineName;
  /** Where attempts run: on workers (bullmq), the agents' logins are theirs. @default session.json's `backend`, else local */
  backend?: BackendChoice | undefined;
  prepare?: (rows: TaskRow[], waves: ReadonlyMap<string, number>) => void | Iterable<string>;
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
  /** The artifact registry, the injection rules, the validator roles and the branches (dynamic/), checked before any task. */
  contracts: SessionContracts;
}

/**
 * Everything before a run's first task: options settled, the session held and brought up
 * to date, the tasks validated, the executor checked, the waves filled in and tasks.csv
 * written once. The caller releases the lock; a run refused here has released it, and
 * before the first write it leaves the folder as it was.
 */
export async function prepareRun(path: string, request: RunRequest, warn: (message: string) => void): Promise<PreparedRun> {
  const session = openSession(path, request.pipeline === undefined ? {} : { pipeline: request.pipeline });
  const settings = normalizeRunOptions(request, session);
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
    // A person watching the spreadsheet sees `pending`, not an empty cell, once the run has started.
    for (const row of held.table.rows) if (row.status === '') row.status = 'pending';
    writeFirst(held, {
      // Saved between our read and this write: nothing ran yet, and the journal (if any) stays.
      edited: `${session.displayPath} was changed by someone else while csv-wave was reading it; nothing was run. Run the command again.`,
      failed:
        `Nothing was run; tasks.csv and the journal were left as they were. ` +
        `Free some space (or make the folder writable) and run \`csv-wave resume ${path}\`.`,
    });
    return { ...held, settings, pipelineSettings, plan, reset, contracts, ...(workdir === undefined ? {} : { workdir }) };
  } catch (error) {
    held.lock.release();
    throw error;
  }
}
