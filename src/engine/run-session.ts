import { readdirSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { writeFileAtomic } from '../csv/atomic-write.js';
import { splitList } from '../csv/columns.js';
import { rowCells, type TaskRow } from '../csv/tasks-file.js';
import { serializeWaveFile } from '../csv/wave-file.js';
import { WaveError } from '../errors.js';
import type { ExecutorSpec, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { WorkerPool } from '../executors/worker-pool.js';
import { buildPrevContext } from '../graph/prev-context.js';
import pLimit from 'p-limit';
import { finishAttempt } from '../executors/finish-attempt.js';
import { NoAnswers } from '../interactive/answers.js';
import { handlersFor } from '../interactive/handlers.js';
import { InteractiveLane } from '../interactive/lane.js';
import type { AnswerSource, InteractiveHandler } from '../interactive/types.js';
import { ExplorationCache } from '../knowledge/exploration-cache.js';
import { recordUsage } from '../knowledge/usage.js';
import { writeContextReport } from '../knowledge/context-report.js';
import { DiscoveryBoard } from '../knowledge/discoveries-board.js';
import { writeDiscoveryFile } from '../knowledge/discovery-files.js';
import { appendWisdom, kWisdomKinds } from '../knowledge/wisdom.js';
import type { SessionConfig } from '../schema/session.js';
import { RunEmitter, type RunSummary } from './events.js';
import { Journal, recoverRows } from './journal.js';
import { isAlive, SessionLock } from './lock.js';
import { normalizeRunOptions, type RunOptions } from './options.js';
import { Scheduler } from './scheduler.js';
import { openSession } from './session.js';
import { countByStatus } from './status-report.js';
import { skippedForFailure, statusOf } from '../schema/task-state.js';
import { TasksWriter } from './tasks-writer.js';
import { validateTasks } from './validate.js';

export interface RunSessionOptions extends RunOptions {
  /** Listen here for task:start, task:done, wave:done, run:done and warnings. */
  events?: RunEmitter;
  /** Handlers of the interactive lane by role. @default the pipeline's own (GC controller, discussion gate) */
  interactiveHandlers?: ReadonlyMap<string, InteractiveHandler>;
  /** Where the discussion gate's answers come from. @default none: a gate fails, saying how to answer */
  answers?: AnswerSource;
  /** Changes the rows before the run starts (rerun uses it to reset tasks). */
  prepare?: (rows: TaskRow[], waves: ReadonlyMap<string, number>) => void;
  /**
   * Aborting it stops the run the gentle way (the CLI's first Ctrl-C): no new task starts,
   * running ones finish and are recorded, and the run ends with `stopped: 'signal'`.
   */
  signal?: AbortSignal;
}

/** tasks.csv is rewritten at least this far apart while tasks finish (and at every wave end). */
const kMinCheckpointMs = 1000;
/** …and never more than this share of the time, however big the file. */
const kCheckpointShare = 20;

/**
 * Runs every pending task of a session and resolves with a summary. Holds the session
 * lock throughout; every state change is journaled before it is shown in tasks.csv, so
 * a crash at any instant loses nothing the engine had accepted.
 */
export async function runSession(path: string, options: RunSessionOptions = {}): Promise<RunSummary> {
  const startedAt = performance.now();
  const events = options.events ?? new RunEmitter();
  const warn = (message: string) => events.emit('warning', message);
  const session = openSession(path);
  const settings = normalizeRunOptions(withSessionDefaults(options, session.config, session.dir));
  const lock = SessionLock.acquire(session.dir, warn);
  try {
    removeStaleTemporaries(session.dir, basename(session.tasksPath));
    const { table, writer } = TasksWriter.read(session.tasksPath);
    if (settings.bom ?? session.config.bom) table.format.bom = true;
    const { recovered, interrupted } = recoverRows(table.rows, session.dir);
    if (recovered > 0) warn(`Recovered ${recovered} task state(s) from the journal of an earlier run`);
    if (interrupted > 0) warn(`${interrupted} task(s) left in progress by an interrupted run go back to pending`);

    const report = validateTasks(table, session.config.pipeline);
    if (report.violations.length > 0) {
      throw new WaveError('INVALID_TASKS', `${report.violations.length} problem(s) in ${session.displayPath}`, {
        path: session.displayPath,
        violations: report.violations,
      });
    }
    const { waves, waveCount } = report.plan;
    for (const row of table.rows) row.wave = String(waves.get(row.id));
    options.prepare?.(table.rows, waves);

    if (!writer.write()) {
      // Saved between our read and this write: nothing ran yet, and the journal (if any) stays.
      throw new WaveError(
        'TASKS_EDITED',
        `${session.displayPath} was changed by someone else while csv-wave was reading it; nothing was run. Run the command again.`,
        { path: session.displayPath },
      );
    }
    const journal = new Journal(session.dir);
    journal.checkpoint();
    events.on('task:start', (event) => journal.append({ type: 'start', id: event.id, attempt: event.attempt }));
    events.on('tasks:changed', ({ added, updated }) => {
      for (const row of added) journal.append({ type: 'add', row: rowCells(row) });
      for (const update of updated) journal.append({ type: 'update', ...update });
    });
    events.on('task:done', (event) =>
      journal.append({
        type: 'finish',
        id: event.id,
        status: event.status,
        findings: event.findings,
        gc_signal: event.gc_signal,
        severity_summary: event.severity_summary,
        error: event.error,
      }),
    );

    const runIds = new Set(table.rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
    events.emit('run:start', { session: session.dir, total: runIds.size, waveCount });
    const pool = new WorkerPool({
      threads: settings.threads,
      tasksPerThread: Math.ceil(settings.concurrency / settings.threads),
      workerMemoryMb: settings.workerMemoryMb,
    });
    // One limit per run is one per endpoint: a run talks to one model server.
    const endpointLimit = settings.executor.type === 'openai' ? pLimit(settings.endpointConcurrency) : undefined;
    const explorations = new ExplorationCache(session.dir);
    const runTask = (request: WorkerRequest): Promise<WorkerReply> => {
      const cached = cachedExploration(request, explorations);
      if (cached) {
        warn(`${request.task.id} reused the exploration of ${cached.createdBy} (angle ${request.task.row.angle})`);
        return Promise.resolve(finishAttempt(request.task, { kind: 'result', result: { findings: cached.findings } }));
      }
      return endpointLimit ? endpointLimit(() => pool.run(request)) : pool.run(request);
    };
    const lane = new InteractiveLane({
      handlers: options.interactiveHandlers ?? handlersFor(session.config.pipeline),
      rows: () => table.rows,
      config: session.config,
      sessionDir: session.dir,
      runExecutor: runTask,
      answers: options.answers ?? new NoAnswers(),
    });
    const board = new DiscoveryBoard(session.dir, warn);

    const scheduler = new Scheduler(
      table.rows,
      waves,
      runIds,
      {
        executor: settings.executor,
        sessionDir: session.dir,
        concurrency: settings.concurrency,
        schedule: settings.schedule,
        retries: settings.retries,
        retryBaseMs: settings.retryBaseMs,
        timeoutMs: settings.timeoutSeconds * 1000,
        prevContextCap: settings.prevContextCap,
        halt: settings.halt,
      },
      { runTask, runInteractive: (request) => lane.run(request) },
      events,
      {
        onFinished: (row, reply) => {
          recordKnowledge(session.dir, row, reply, board);
          if (reply?.usage) recordUsage(session.dir, row.id, reply.usage);
          if (row.role === 'explorer' && row.status === 'completed') explorations.store(row.angle, row.id, row.findings);
        },
        onWaveReady: (wave) => {
          // Waves change when an interactive task adds tasks: read them from the rows.
          const byId = new Map(table.rows.map((row) => [row.id, row]));
          const rows = table.rows.filter((row) => row.wave === String(wave) && row.exec_mode !== 'interactive');
          const withContext = rows.map((row) => ({
            row,
            prevContext: buildPrevContext(splitList(row.context_from), (id) => byId.get(id), settings.prevContextCap),
          }));
          writeFileAtomic(join(session.dir, `wave-${wave}.csv`), serializeWaveFile(withContext, table.format));
        },
      },
    );

    // tasks.csv follows the run: rewritten on a timer and at each wave end, never over a person's edit.
    const editedReason =
      `${session.displayPath} was changed by someone else during the run, so csv-wave did not overwrite it. ` +
      `Running tasks were let finish; their results are kept in the journal. ` +
      `Run \`csv-wave resume ${path}\` to apply them to the edited file and go on.`;
    let editedNoted = false;
    /** Shows the run in tasks.csv; false (and the run stops) if a person's edit is in the way. */
    const checkpoint = (): boolean => {
      journal.flush();
      if (writer.write()) {
        journal.checkpoint();
        return true;
      }
      if (!editedNoted) {
        editedNoted = true;
        scheduler.stop('edited', editedReason);
      }
      return false;
    };
    let timer: NodeJS.Timeout | undefined;
    const schedule = () => {
      timer = setTimeout(() => {
        checkpoint();
        schedule();
      }, Math.max(kMinCheckpointMs, kCheckpointShare * writer.lastWriteMs));
      timer.unref();
    };
    schedule();
    const onWaveDone = () => void checkpoint();
    events.on('wave:done', onWaveDone);
    events.on('tasks:changed', onWaveDone);

    const interrupt = () =>
      scheduler.stop(
        'signal',
        `Interrupted: no new task was started; running tasks were let finish and recorded. ` +
          `Run \`csv-wave resume ${path}\` to go on.`,
      );
    if (options.signal?.aborted) interrupt();
    options.signal?.addEventListener('abort', interrupt, { once: true });

    let outcome: { stopped: RunSummary['stopped']; reason: string };
    try {
      outcome = await scheduler.run();
    } finally {
      options.signal?.removeEventListener('abort', interrupt);
      clearTimeout(timer);
      events.off('wave:done', onWaveDone);
      events.off('tasks:changed', onWaveDone);
      await pool.close();
    }
    // An edit saved after the last rewrite: the last results stay in the journal, and the
    // run says so instead of ending as if tasks.csv showed them.
    if (outcome.stopped !== 'edited' && !checkpoint()) {
      outcome = { stopped: 'edited', reason: outcome.reason === '' ? editedReason : `${outcome.reason}\n${editedReason}` };
    }
    journal.close();

    const durationMs = performance.now() - startedAt;
    const finalWaves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
    writeContextReport(session.dir, { table, waves: finalWaves, durationMs, stopReason: outcome.reason });
    const counts = countByStatus(table.rows);
    const failedOrBlocked = table.rows.some(
      (row) => row.status === 'failed' || skippedForFailure(row),
    );
    const exitCode = outcome.stopped === 'edited' ? 3 : outcome.stopped || failedOrBlocked ? 1 : 0;
    const summary: RunSummary = {
      total: runIds.size,
      counts,
      durationMs,
      stopped: outcome.stopped,
      reason: outcome.reason,
      exitCode,
    };
    events.emit('run:done', summary);
    return summary;
  } finally {
    lock.release();
  }
}

/**
 * Deletes the temporary files of atomic writes (`tasks.csv.<pid>.tmp`, `wave-<N>.csv.<pid>.tmp`)
 * that a run killed mid-write left in the session folder. Only those of processes that are
 * gone: the caller holds the lock, so no other run is writing.
 */
function removeStaleTemporaries(sessionDir: string, tasksFileName: string): void {
  for (const name of readdirSync(sessionDir)) {
    const match = /^(.+\.csv)\.(\d+)\.tmp$/.exec(name);
    if (!match || (match[1] !== tasksFileName && !/^wave-\d+\.csv$/.test(match[1]!))) continue;
    const pid = Number(match[2]);
    if (pid !== process.pid && !isAlive(pid)) rmSync(join(sessionDir, name), { force: true });
  }
}

/** Knowledge files of a finished task: discoveries, wisdom, and the discovery file when the worker wrote none. */
function recordKnowledge(sessionDir: string, row: TaskRow, reply: WorkerReply | undefined, board: DiscoveryBoard): void {
  if (reply?.kind === 'finished') {
    board.add(row.id, reply.discoveries);
    for (const kind of kWisdomKinds) appendWisdom(sessionDir, row.id, kind, reply.wisdom[kind] ?? []);
    if (reply.supervision_verdict === 'warn') {
      const score = reply.supervision_score == null ? '' : ` (score ${reply.supervision_score})`;
      appendWisdom(sessionDir, row.id, 'issues', [`Supervisor checkpoint warned${score}: ${row.findings}`]);
    }
    return;
  }
  writeDiscoveryFile(sessionDir, {
    taskId: row.id,
    role: row.role,
    status: row.status === 'skipped' ? 'skipped' : 'failed',
    findings: '',
    error: row.error,
    artifacts: [],
  });
}

/** Command-line options win; session.json fills what they leave out. */
function withSessionDefaults(options: RunOptions, config: SessionConfig, sessionDir: string): RunOptions {
  const merged: RunOptions = { ...options };
  if (!merged.executor && config.executor) merged.executor = executorFromConfig(config.executor, sessionDir);
  if (merged.concurrency === undefined && config.concurrency !== undefined) merged.concurrency = config.concurrency;
  if (merged.timeoutSeconds === undefined && config.timeout !== undefined) merged.timeoutSeconds = config.timeout;
  if (merged.retries === undefined && config.retries !== undefined) merged.retries = config.retries;
  if (merged.schedule === undefined && config.schedule !== undefined) merged.schedule = config.schedule;
  if (merged.prevContextCap === undefined && config.prev_context_cap !== undefined) {
    merged.prevContextCap = config.prev_context_cap;
  }
  return merged;
}

/** An explorer task whose angle was explored before in the session (seed 000, exploration cache). */
function cachedExploration(request: WorkerRequest, cache: ExplorationCache): { findings: string; createdBy: string } | undefined {
  const { role, angle } = request.task.row;
  const cached = role === 'explorer' && angle ? cache.lookup(angle) : undefined;
  // A task run again (a rerun) explores anew rather than reading back its own result.
  return cached?.createdBy === request.task.id ? undefined : cached;
}

function executorFromConfig(executor: NonNullable<SessionConfig['executor']>, sessionDir: string): ExecutorSpec {
  if (executor.type === 'command' && executor.cmd) return { type: 'command', template: executor.cmd };
  if (executor.type === 'openai' && executor.model) {
    return { type: 'openai', model: executor.model, ...(executor.base_url ? { baseUrl: executor.base_url } : {}) };
  }
  if (executor.type === 'module' && executor.module) {
    return { type: 'module', path: isAbsolute(executor.module) ? executor.module : resolve(sessionDir, executor.module) };
  }
  throw new WaveError(
    'INVALID_SESSION',
    `session.json: executor ${executor.type} needs ${executor.type === 'command' ? '"cmd"' : executor.type === 'module' ? '"module"' : '"model"'}`,
  );
}
