import { readdirSync, rmSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { rowCells, type TaskRow } from '../csv/tasks-file.js';
import { WaveError } from '../errors.js';
import type { ExecutorSpec, WorkerReply } from '../executors/messages.js';
import { NoAnswers } from '../interactive/answers.js';
import { handlersFor } from '../interactive/handlers.js';
import { InteractiveLane } from '../interactive/lane.js';
import type { AnswerSource, InteractiveHandler } from '../interactive/types.js';
import { ExplorationCache } from '../knowledge/exploration-cache.js';
import { writeContextReport } from '../knowledge/context-report.js';
import { sessionPathForRead } from '../knowledge/session-path.js';
import type { PipelineName, SessionConfig } from '../schema/session.js';
import { killLeftoverCommands } from '../backend/local/child-groups.js';
import { RunEmitter, type RunSummary } from './events.js';
import { Journal, recoverRows } from './journal.js';
import { recordAttempts } from './attempt-log.js';
import { RunReporter } from '../report/run-reporter.js';
import { isAlive, SessionLock } from './lock.js';
import { normalizeRunOptions, type RunOptions } from './options.js';
import { Scheduler, type StopReason } from './scheduler.js';
import { createTaskRunner } from './task-runner.js';
import { KnowledgeSink } from './knowledge-sink.js';
import { LocalBackend } from '../backend/local/local-backend.js';
import { openSession, settlePipeline } from './session.js';
import { checkSessionOwner, claimSession } from './session-owner.js';
import { countByStatus } from './status-report.js';
import { skippedForFailure, statusOf } from '../schema/task-state.js';
import { TasksWriter } from './tasks-writer.js';
import { Checkpointer } from './checkpointer.js';
import { checkExecutor } from './check-executor.js';
import { validateTasks } from './validate.js';
import { fillWaveColumn } from './plan.js';

export interface RunSessionOptions extends RunOptions {
  /**
   * The pipeline, over session.json's (the CLI's `--pipeline`).
   * @default session.json's; else brainstorm when every role is a brainstorm role, generic otherwise
   */
  pipeline?: PipelineName;
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
   * running ones get `graceSeconds` to finish and be recorded, and the run ends with
   * `stopped: 'signal'`.
   */
  signal?: AbortSignal;
  /** Aborting it ends the grace at once (the CLI's second Ctrl-C). */
  killSignal?: AbortSignal;
}

/**
 * Runs every pending task of a session and resolves with a summary. Holds the session
 * lock throughout; every state change is journaled before it is shown in tasks.csv, so
 * a crash at any instant loses nothing the engine had accepted.
 */
export async function runSession(path: string, options: RunSessionOptions = {}): Promise<RunSummary> {
  const startedAt = performance.now();
  const events = options.events ?? new RunEmitter();
  const warn = (message: string) => events.emit('warning', message);
  const session = openSession(path, options.pipeline === undefined ? {} : { pipeline: options.pipeline });
  const settings = normalizeRunOptions(withSessionDefaults(options, session.config, session.dir));
  const graceSeconds = settings.graceSeconds;
  checkSessionOwner(session);
  const lock = SessionLock.acquire(session.dir, warn);
  try {
    // Again under the lock: another tasks file may have claimed the folder in between.
    checkSessionOwner(session);
    removeStaleTemporaries(session.dir, basename(session.tasksPath), warn);
    // A resume must not run a task beside its own command, still running from a killed run.
    const leftovers = killLeftoverCommands(session.dir);
    if (leftovers > 0) warn(`Ended ${leftovers} command(s) an interrupted run of this session left running`);
    const { table, writer } = TasksWriter.read(session.tasksPath, { maxRows: session.config.max_rows });
    if (settings.bom ?? session.config.bom) table.format.bom = true;
    const { recovered, interrupted } = recoverRows(table.rows, session.dir);
    if (recovered > 0) warn(`Recovered ${recovered} task state(s) from the journal of an earlier run`);
    if (interrupted > 0) warn(`${interrupted} task(s) left in progress by an interrupted run go back to pending`);
    settlePipeline(session, table.rows.map((row) => row.role));

    const report = validateTasks(table, session.config.pipeline);
    if (report.violations.length > 0) {
      throw new WaveError('INVALID_TASKS', `${report.violations.length} problem(s) in ${session.displayPath}`, {
        path: session.displayPath,
        violations: report.violations,
      });
    }
    // A bad executor fails here, once, rather than on every task.
    await checkExecutor(settings.executor, table.columns, session.dir);
    const { waves, waveCount } = report.plan;
    fillWaveColumn(table.rows, waves);
    options.prepare?.(table.rows, waves);

    // The first write into the session: a run refused before it leaves the folder as it was.
    claimSession(session);
    if (!writeBeforeRun(writer, path)) {
      // Saved between our read and this write: nothing ran yet, and the journal (if any) stays.
      throw new WaveError(
        'TASKS_EDITED',
        `${session.displayPath} was changed by someone else while csv-wave was reading it; nothing was run. Run the command again.`,
        { path: session.displayPath },
      );
    }

    // How the run ends early. The scheduler only needs to stop starting tasks; the reason
    // given to it first is the one the run reports.
    let stopping: { stopped: StopReason; reason: string } | undefined;
    let stopScheduler: (reason: StopReason, explanation: string) => void = () => {};
    const stopRun = (reason: StopReason, explanation: string) => {
      stopping ??= { stopped: reason, reason: explanation };
      stopScheduler(reason, explanation);
    };

    // A write into the session folder that fails (it became read-only, the disk is full)
    // stops the run like a halt: no new task, running ones finish into the journal, which
    // stays open and writable. Nothing is thrown from a timer or an event handler.
    let writeProblem: string | undefined;
    const writeFailed = (error: unknown) => {
      if (writeProblem !== undefined) return;
      writeProblem = error instanceof Error ? error.message : String(error);
      warn(`${writeProblem}: no new task will start; running tasks finish into the journal`);
      stopRun('io', writeStopReason(writeProblem, path, false));
    };
    const guarded = (work: () => void) => {
      try {
        work();
      } catch (error) {
        writeFailed(error);
      }
    };

    const journal = new Journal(session.dir, writeFailed, { attempts: true });
    recordAttempts(events, journal);
    // report.html at each wave end shows the attempts of the wave: they are flushed first.
    const reporter = new RunReporter(session.dir, table, warn);
    events.on('wave:done', () => {
      journal.flush();
      reporter.waveEnd();
    });
    journal.checkpoint();
    events.on('task:start', (event) => journal.append({ type: 'start', id: event.id, attempt: event.attempt }));
    // What ran, for the summary: a halt or a stop leaves scheduled tasks that never started.
    const started = new Set<string>();
    let attempts = 0;
    events.on('task:start', (event) => {
      started.add(event.id);
      attempts++;
    });
    let added = 0;
    events.on('tasks:changed', (change) => {
      added += change.added.length;
      for (const row of change.added) journal.append({ type: 'add', row: rowCells(row) });
      for (const update of change.updated) journal.append({ type: 'update', ...update });
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
    const backend = new LocalBackend({
      sessionDir: session.dir,
      threads: settings.threads,
      tasksPerThread: Math.ceil(settings.concurrency / settings.threads),
      workerMemoryMb: settings.workerMemoryMb,
      // One limit per run is one per endpoint: a run talks to one model server.
      endpointConcurrency: settings.executor.type === 'openai' ? settings.endpointConcurrency : undefined,
    });
    const sink = new KnowledgeSink({
      sessionDir: session.dir,
      table,
      discoveryFiles: settings.discoveryFiles ?? (session.config.pipeline === 'generic' ? 'when-rich' : 'always'),
      maxDiscoveryLineBytes: settings.maxDiscoveryLineBytes,
      prevContextCap: settings.prevContextCap,
      warn,
    });
    const runTask = createTaskRunner({
      backend,
      sink,
      explorations: new ExplorationCache(session.dir),
      limits: {
        maxStdoutBytes: settings.maxStdoutBytes,
        maxArtifactsPerTask: settings.maxArtifactsPerTask,
        maxArtifactBytes: settings.maxArtifactBytes,
      },
      warn,
      sessionDir: session.dir,
      prompts:
        settings.executor.type === 'openai' ? { pipeline: session.config.pipeline, topic: session.config.topic ?? '' } : undefined,
    });
    const lane = new InteractiveLane({
      handlers: options.interactiveHandlers ?? handlersFor(session.config.pipeline),
      rows: () => table.rows,
      config: session.config,
      sessionDir: session.dir,
      runExecutor: runTask,
      answers: options.answers ?? new NoAnswers(),
    });

    // A task that could not write its own files into the session (class io) stops the run
    // like a failed rewrite of tasks.csv. Once the session cannot be written, a task that
    // comes back failed may have failed for that reason alone: it goes back to pending.
    const keepReply = (reply: WorkerReply) => {
      if (reply.kind === 'error' && reply.errorClass === 'io') writeFailed(new Error(reply.error));
      return writeProblem === undefined || reply.kind !== 'error';
    };
    const inFlight = new InFlight((id) => table.rows.find((row) => row.id === id));
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
      {
        runTask: (request) => inFlight.track(request.task.id, runTask(request), keepReply),
        runInteractive: (request) => inFlight.track(request.task.id, lane.run(request), (result) => keepReply(result.reply)),
      },
      events,
      {
        onFinished: (row, reply) => guarded(() => sink.taskFinished(row, reply)),
        onWaveReady: (wave) => guarded(() => sink.waveReady(wave)),
      },
    );
    stopScheduler = (reason, explanation) => scheduler.stop(reason, explanation);
    if (stopping) scheduler.stop(stopping.stopped, stopping.reason);

    // tasks.csv follows the run: rewritten on a timer and at each wave end, never over a person's edit.
    const editedReason =
      `${session.displayPath} was changed by someone else during the run, so csv-wave did not overwrite it. ` +
      `Running tasks were let finish; their results are kept in the journal. ` +
      `Run \`csv-wave resume ${path}\` to apply them to the edited file and go on.`;
    const checkpointer = new Checkpointer(writer, journal, {
      edited: () => stopRun('edited', editedReason),
      failed: writeFailed,
    });
    checkpointer.start(events);

    // A signal: no new task; the running ones get the grace, then are killed and go back to pending.
    let graceTimer: NodeJS.Timeout | undefined;
    let killed: string[] | undefined;
    let killedAtOnce = false;
    const killRunning = (atOnce: boolean) => {
      if (killed) return;
      killedAtOnce = atOnce;
      killed = inFlight.takeBackAll();
      if (killed.length > 0) {
        warn(`Stopped ${killed.length} running task(s) (${killed.join(', ')}); they are pending again`);
        void backend.cancelAll();
      }
    };
    const interrupt = () => {
      stopRun(
        'signal',
        `Interrupted: no new task was started; running tasks were let finish and recorded. ` +
          `Run \`csv-wave resume ${path}\` to go on.`,
      );
      graceTimer ??= setTimeout(() => killRunning(false), graceSeconds * 1000);
    };
    const interruptNow = () => {
      interrupt();
      killRunning(true);
    };
    if (options.signal?.aborted) interrupt();
    options.signal?.addEventListener('abort', interrupt, { once: true });
    if (options.killSignal?.aborted) interruptNow();
    options.killSignal?.addEventListener('abort', interruptNow, { once: true });

    let outcome: { stopped: RunSummary['stopped']; reason: string };
    try {
      // The scheduler ends when every task it handed out has come back; a task taken back
      // never comes back, so the run also ends when nothing else is out.
      const scheduled = await Promise.race([scheduler.run(), inFlight.drained.then(() => undefined)]);
      outcome = scheduled ?? stopping ?? { stopped: undefined, reason: '' };
    } finally {
      options.signal?.removeEventListener('abort', interrupt);
      options.killSignal?.removeEventListener('abort', interruptNow);
      clearTimeout(graceTimer);
      checkpointer.stop();
      await backend.close();
      // Commands of tasks taken back, including any spawned while the pool was closing, and
      // what they started outside their process groups (setsid): no task of the run is left.
      if (killed && killed.length > 0) {
        await backend.cancelAll();
        killLeftoverCommands(session.dir);
      }
    }
    if (outcome.stopped === 'signal' && killed && killed.length > 0) {
      outcome = {
        stopped: 'signal',
        reason:
          `Interrupted: no new task was started; ` +
          (killedAtOnce
            ? `the ${killed.length} running task(s) (${killed.join(', ')}) were stopped at once and put back to pending. `
            : `running tasks had ${graceSeconds}s to finish, and the ${killed.length} that had not (${killed.join(', ')}) ` +
              `were stopped and put back to pending. `) +
          `Run \`csv-wave resume ${path}\` to go on.`,
      };
    }
    // An edit saved after the last rewrite: the last results stay in the journal, and the
    // run says so instead of ending as if tasks.csv showed them.
    const shown = outcome.stopped !== 'edited' && checkpointer.checkpoint();
    if (!shown && checkpointer.edited && outcome.stopped !== 'edited') {
      outcome = { stopped: 'edited', reason: joinReasons(outcome.reason, editedReason) };
    }
    // Written before the reason is told, so that it can say whether the journal holds everything.
    const journalComplete = journal.close();
    if (writeProblem !== undefined && outcome.stopped !== 'edited') {
      const why = writeStopReason(writeProblem, path, shown, journalComplete);
      const stoppedByWrite = outcome.reason === writeStopReason(writeProblem, path, false);
      outcome = {
        stopped: outcome.stopped === 'signal' ? 'signal' : 'io',
        reason: stoppedByWrite ? why : joinReasons(outcome.reason, why),
      };
    }

    const durationMs = performance.now() - startedAt;
    const finalWaves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
    try {
      writeContextReport(session.dir, { table, waves: finalWaves, durationMs, stopReason: outcome.reason });
    } catch (error) {
      warn(`context.md was not written: ${error instanceof Error ? error.message : String(error)}`);
    }
    reporter.final();
    const counts = countByStatus(table.rows);
    const failedOrBlocked = table.rows.some(
      (row) => row.status === 'failed' || skippedForFailure(row),
    );
    const exitCode = outcome.stopped === 'edited' ? 3 : outcome.stopped || failedOrBlocked ? 1 : 0;
    const summary: RunSummary = {
      // Tasks added during the run (a GC round, a discussion) ran in it too.
      total: runIds.size + added,
      ran: started.size,
      attempts,
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

/** The first rewrite of tasks.csv (waves filled in, the journal applied); a failure says that nothing ran. */
function writeBeforeRun(writer: TasksWriter, path: string): boolean {
  try {
    return writer.write();
  } catch (error) {
    if (!(error instanceof WaveError) || error.code !== 'WRITE_FAILED') throw error;
    throw new WaveError(
      'WRITE_FAILED',
      `${error.message}. Nothing was run; tasks.csv and the journal were left as they were. ` +
        `Free some space (or make the folder writable) and run \`csv-wave resume ${path}\`.`,
      { ...(error.path === undefined ? {} : { path: error.path }), cause: error },
    );
  }
}

function joinReasons(first: string, second: string): string {
  return first === '' ? second : `${first}\n${second}`;
}

/** Why a run whose session folder could not be written stopped, and what to do. */
function writeStopReason(problem: string, path: string, shownAtLast: boolean, journalComplete = true): string {
  if (shownAtLast) {
    return (
      `Stopped: csv-wave could not write to the session folder for a while (${problem}); no new task was started after that, ` +
      `and tasks.csv shows every result. Run \`csv-wave resume ${path}\` to go on.`
    );
  }
  const kept = journalComplete
    ? 'the results of the tasks that finished are kept in the journal (.csv-wave/journal.ndjson)'
    : 'the journal (.csv-wave/journal.ndjson) could not be written either, so the results of the last tasks to finish ' +
      'were lost: those tasks run again on resume';
  return (
    `Stopped: csv-wave cannot write to the session folder (${problem}). No new task was started; ${kept}. ` +
    `Make the folder writable again (or free some space) and run \`csv-wave resume ${path}\`: it applies the journal ` +
    `to tasks.csv and goes on.`
  );
}

/**
 * The tasks handed to an executor (or the interactive lane) that have not come back. A
 * run that must end before they do takes them back: they go back to pending, whatever
 * they answer later is ignored, and `drained` resolves once nothing else is out.
 */
class InFlight {
  readonly #rowOf: (id: string) => TaskRow | undefined;
  readonly #out = new Map<string, { takeBack: () => void }>();
  #tookBack = 0;
  #resolveDrained: () => void = () => {};
  readonly drained = new Promise<void>((resolve) => {
    this.#resolveDrained = resolve;
  });

  constructor(rowOf: (id: string) => TaskRow | undefined) {
    this.#rowOf = rowOf;
  }

  /** Passes on what `work` resolves with, unless `keep` says no: then the task is taken back. */
  track<T>(id: string, work: Promise<T>, keep: (value: T) => boolean): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = {
        takeBack: () => {
          this.#out.delete(id);
          const row = this.#rowOf(id);
          if (row) row.status = 'pending';
          this.#tookBack++;
          this.#checkDrained();
        },
      };
      this.#out.set(id, entry);
      const isOut = () => this.#out.get(id) === entry;
      work.then(
        (value) => {
          if (!isOut()) return;
          if (!keep(value)) {
            entry.takeBack();
            return;
          }
          this.#out.delete(id);
          resolve(value);
          this.#checkDrained();
        },
        (error: unknown) => {
          if (!isOut()) return;
          this.#out.delete(id);
          reject(error);
          this.#checkDrained();
        },
      );
    });
  }

  /** Takes back every task that is out; returns their ids. */
  takeBackAll(): string[] {
    const ids = [...this.#out.keys()];
    for (const entry of [...this.#out.values()]) entry.takeBack();
    return ids;
  }

  #checkDrained(): void {
    // After the scheduler has dealt with the last answer that was passed on (a later turn).
    if (this.#tookBack > 0 && this.#out.size === 0) setImmediate(this.#resolveDrained);
  }
}

/**
 * Deletes the temporary files of atomic writes (`tasks.csv.<pid>.tmp`, `wave-<N>.csv.<pid>.tmp`)
 * that a run killed mid-write left in the session folder. Only those of processes that are
 * gone: the caller holds the lock, so no other run is writing. One that cannot be deleted
 * (a read-only folder) is left for a later run, with a warning.
 */
function removeStaleTemporaries(sessionDir: string, tasksFileName: string, warn: (message: string) => void): void {
  for (const name of readdirSync(sessionDir)) {
    const match = /^(.+\.csv)\.(\d+)\.tmp$/.exec(name);
    if (!match || (match[1] !== tasksFileName && !/^wave-\d+\.csv$/.test(match[1]!))) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || isAlive(pid)) continue;
    try {
      rmSync(join(sessionDir, name), { force: true });
    } catch (error) {
      warn(`Cannot delete ${name}, left by an interrupted run: ${(error as Error).message}`);
    }
  }
}

/** Command-line options win; session.json fills what they leave out. */
function withSessionDefaults(options: RunOptions, config: SessionConfig, sessionDir: string): RunOptions {
  const merged: RunOptions = { ...options };
  // A relative module path is relative to the session folder, given as an option (--module)
  // or in session.json alike: commands run there too.
  if (merged.executor?.type === 'module' && !isAbsolute(merged.executor.path)) {
    merged.executor = { ...merged.executor, path: resolve(sessionDir, merged.executor.path) };
  }
  if (!merged.executor && config.executor) merged.executor = executorFromConfig(config.executor, sessionDir);
  if (merged.concurrency === undefined && config.concurrency !== undefined) merged.concurrency = config.concurrency;
  if (merged.timeoutSeconds === undefined && config.timeout !== undefined) merged.timeoutSeconds = config.timeout;
  if (merged.retries === undefined && config.retries !== undefined) merged.retries = config.retries;
  if (merged.schedule === undefined && config.schedule !== undefined) merged.schedule = config.schedule;
  if (merged.output === undefined && config.output !== undefined) merged.output = config.output;
  if (merged.prevContextCap === undefined && config.prev_context_cap !== undefined) {
    merged.prevContextCap = config.prev_context_cap;
  }
  if (merged.maxStdoutBytes === undefined && config.max_stdout_bytes !== undefined) merged.maxStdoutBytes = config.max_stdout_bytes;
  if (merged.maxArtifactsPerTask === undefined && config.max_artifacts_per_task !== undefined) {
    merged.maxArtifactsPerTask = config.max_artifacts_per_task;
  }
  if (merged.maxArtifactBytes === undefined && config.max_artifact_bytes !== undefined) merged.maxArtifactBytes = config.max_artifact_bytes;
  // Without either, the pipeline decides, once it is settled from the roles.
  if (merged.discoveryFiles === undefined && config.discovery_files !== undefined) merged.discoveryFiles = config.discovery_files;
  if (merged.maxDiscoveryLineBytes === undefined && config.max_discovery_line_bytes !== undefined) {
    merged.maxDiscoveryLineBytes = config.max_discovery_line_bytes;
  }
  return merged;
}

function executorFromConfig(executor: NonNullable<SessionConfig['executor']>, sessionDir: string): ExecutorSpec {
  if (executor.type === 'command' && executor.cmd) return { type: 'command', template: executor.cmd };
  if (executor.type === 'openai' && executor.model) {
    return { type: 'openai', model: executor.model, ...(executor.base_url ? { baseUrl: executor.base_url } : {}) };
  }
  if (executor.type === 'module' && executor.module) {
    return { type: 'module', path: modulePathFromConfig(executor.module, sessionDir) };
  }
  throw new WaveError(
    'INVALID_SESSION',
    `session.json: executor ${executor.type} needs ${executor.type === 'command' ? '"cmd"' : executor.type === 'module' ? '"module"' : '"model"'}`,
  );
}

/**
 * A module path in session.json. A relative one is relative to the session folder and
 * must stay inside it, through symlinks too. An absolute one is taken as written: it is
 * configuration, like a `cmd` (which may run anything), and `init --module` records the
 * path given on its command line that way.
 */
function modulePathFromConfig(module: string, sessionDir: string): string {
  if (isAbsolute(module)) return module;
  try {
    return sessionPathForRead(sessionDir, module);
  } catch (error) {
    throw new WaveError(
      'INVALID_SESSION',
      `session.json: executor.module: ${(error as Error).message}. ` +
        'A relative module path must stay inside the session folder: give an absolute path, or pass --module PATH',
      { cause: error },
    );
  }
}
