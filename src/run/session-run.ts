import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { kLayout } from '../layout.js';
import { requiredColumns } from '../pipelines/pipeline-columns.js';
import type { TaskRow } from '../core/task.js';
import { NoAnswers } from '../interactive/answers.js';
import { InteractiveLane } from '../interactive/lane.js';
import type { AnswerSource, InteractiveHandler } from '../interactive/types.js';
import { writeContextReport } from '../knowledge/context-report.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import type { PipelineName } from '../schema/session.js';
import { checkBackendFree, chooseBackend, openBackend, type BackendChoice, type BackendPlan, type ExecutionBackend } from '../backend/index.js';
import { backendAsk } from './backend-ask.js';
import { RunEmitter, type RunSummary, type TasksEditedEvent } from '../events/events.js';
import { Interrupt } from './interrupt.js';
import { Journal, readJournalWithCarried, readOpenBatches } from '../session/journal.js';
import { jobsToReattach } from './job-reattach.js';
import { OutcomeSink } from './record/outcome-sink.js';
import type { RunOptions } from '../options/options.js';
import { prepareRun, type PreparedRun } from './prepare-run.js';
import { runOutcome, unmergeableStopReason, type RunEnding } from './run-outcome.js';
import { RunStop } from './run-stop.js';
import { RunTally } from './run-tally.js';
import { Scheduler } from './scheduler.js';
import { createTaskRunner } from './task-runner.js';
import { KnowledgeSink, type WaveFilesSeen } from './record/knowledge-sink.js';
import type { TasksTable } from '../csv/tasks-table.js';
import { skippedForFailure, statusOf } from '../core/skip-cause.js';
import { Checkpointer } from '../session/checkpointer.js';
import { EditIntake } from '../session/edits/edit-intake.js';
import { EditLedger } from '../session/edits/edit-ledger.js';
import { startChecks } from '../session/edits/edit-checks.js';
import { sessionIdOf } from '../session/files/session-id.js';
import { SessionWriter } from '../session/files/session-writer.js';
import type { SecretOptions } from '../backend/bullmq/trust/secret-source.js';
import { sessionBudget } from '../knowledge/budget.js';
import { LiveUsage } from './record/live-usage.js';
import { sweepStaleWorktrees } from './workdir/workdir-setup.js';
import { forgetForcedThatRan, openRunCache } from '../cache/run-cache.js';
import type { ResultCache } from '../cache/result-cache.js';
import type { RerunSelection } from '../commands/rerun.js';
import { SessionDynamics } from '../dynamic/session-dynamics.js';

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
  /**
   * Changes the rows before the run starts (rerun uses it to reset tasks); may return the
   * ids of the tasks it reset: those run afresh, never taking the reply of a job an
   * interrupted run left for them (--backend bullmq).
   */
  prepare?: (rows: TaskRow[], waves: ReadonlyMap<string, number>) => void | Iterable<string>;
  /**
   * Run as a rerun (`csv-wave rerun`): the tasks the selection chooses go back to pending with
   * their dependents (unless `cascade: false`), then the run goes as any. The chosen tasks
   * execute anew; their dependents take a cached result when their inputs are unchanged
   * (docs/cache.md). @default none: a plain run
   */
  rerun?: RerunSelection;
  /**
   * Aborting it stops the run the gentle way (the CLI's first Ctrl-C): no new task starts,
   * running ones get `graceSeconds` to finish and be recorded, and the run ends with
   * `stopped: 'signal'`.
   */
  signal?: AbortSignal;
  /** Aborting it ends the grace at once (the CLI's second Ctrl-C). */
  killSignal?: AbortSignal;
  /** Where attempts run. @default session.json's `backend`, else local */
  backend?: BackendChoice;
  /**
   * With the bullmq backend: seconds Redis may be away before the run stops (exit 1,
   * resumable; `--redis-timeout`). @default 60
   */
  redisTimeoutSeconds?: number;
  /**
   * With the bullmq backend: the secret that signs jobs and replies (`--secret-file`,
   * `--insecure-no-secret`). @default CSV_WAVE_SECRET; a run without any is refused (exit 2)
   */
  bullmqSecret?: SecretOptions;
  /**
   * Keeps a report of the run (report.html) up to date: the engine builds none itself. The
   * CLI and the package's `runSession` pass report/run-reporter.ts's `htmlReport`.
   * @default none
   */
  report?: RunReportFactory;
}

/** A report the run keeps up to date, told when its files change (report/run-reporter.ts). */
export interface RunReport {
  /** A wave ended; its attempts are in the journal. */
  waveEnd(): void;
  /** Every result of the run is written; called before `run:done`. */
  final(): void;
  /** Told of each wave file the run writes, so that the report need not parse it. */
  readonly waveContexts?: WaveFilesSeen;
}

/** Builds the run's report once the session is open and its tasks read; `pricing` prices usage lines as context.md does. */
export type RunReportFactory = (sessionDir: string, table: TasksTable, warn: (message: string) => void, pricing?: PriceTable) => RunReport;


/** How a run tells what happens: its events, and its warnings among them. */
interface RunVoice {
  events: RunEmitter;
  warn: (message: string) => void;
}

/** What an open run is made of, in the order `open` builds it: each uses only those above it. */
interface OpenRun {
  files: SessionWriter;
  journal: Journal;
  backend: ExecutionBackend;
  reporter: RunReport | undefined;
  tally: RunTally;
  liveUsage: LiveUsage;
  scheduler: Scheduler;
  checkpointer: Checkpointer;
  interrupt: Interrupt;
  cache: ResultCache;
}

/**
 * One run of a session, in four phases, each a method called once and in order:
 * - `prepare` (static): options settled, the session locked, validated and written once;
 * - `open`: the journal, the backend, the sinks, the scheduler and what stops it;
 * - `drain`: the tasks run until none is left that can start, then the backend closes;
 * - `finish`: tasks.csv and the journal made final, the reports, the summary.
 * `release` frees the lock whatever happened. Every stop goes through one RunStop, made
 * before anything that may ask for one.
 */
export class SessionRun {
  readonly #path: string;
  readonly #options: RunSessionOptions;
  readonly #startedAt: number;
  readonly #events: RunEmitter;
  readonly #warn: (message: string) => void;
  readonly #prepared: PreparedRun;
  readonly #plan: BackendPlan;
  readonly #stop: RunStop;
  #open: OpenRun | undefined;
  /** Why a save of tasks.csv could not be merged, once one could not. */
  #unmergeable: string | undefined;

  /** Options settled and the session held, locked and written once (prepareRun); the caller releases it. */
  static async prepare(path: string, options: RunSessionOptions): Promise<SessionRun> {
    const startedAt = performance.now();
    const events = options.events ?? new RunEmitter();
    const warn = (message: string) => events.emit('warning', message);
    let plan: BackendPlan | undefined;
    // Each backend's options are checked before the run writes anything (a bullmq run without a secret, or with --batch, is refused), and so is a bullmq session id another run holds.
    const prepared = await prepareRun(path, options, warn, async (settings, session) => {
      plan = chooseBackend(backendAsk(options, settings), session.config.backend);
      await checkBackendFree(plan, session.dir, () => sessionIdOf(session.dir, warn));
    });
    try {
      if (plan === undefined) throw new Error('prepareRun returned without asking its beforeWrite');
      return new SessionRun(path, options, startedAt, { events, warn }, prepared, plan);
    } catch (error) {
      prepared.lock.release();
      throw error;
    }
  }

  private constructor(path: string, options: RunSessionOptions, startedAt: number, voice: RunVoice, prepared: PreparedRun, plan: BackendPlan) {
    this.#path = path;
    this.#options = options;
    this.#startedAt = startedAt;
    this.#events = voice.events;
    this.#warn = voice.warn;
    this.#prepared = prepared;
    this.#plan = plan;
    this.#stop = new RunStop(path, this.#warn);
  }

  /**
   * Builds what the run is made of, each part from those before it: the journal (emptied,
   * keeping what an earlier run left out), the backend, the reports, the budget, the
   * sinks, the scheduler (told of any stop asked for so far), the checkpointer and the
   * answer to signals. Emits run:start.
   */
  async open(): Promise<void> {
    const { session, settings, pipelineSettings, table, writer, plan, reset } = this.#prepared;
    const stop = this.#stop;
    const events = this.#events;
    const warn = this.#warn;
    // What an interrupted run left out, read before this run empties the journal: the jobs
    // of its tasks (bullmq) and its open batches (--batch), both kept through this run's checkpoints.
    const reattach = this.#plan.type === 'bullmq' ? jobsToReattach(readJournalWithCarried(session.dir), table.rows, reset) : [];
    const leftOpen = readOpenBatches(session.dir);
    const journal = new Journal(session.dir, stop.writeFailed, { attempts: true });
    journal.carry(leftOpen);
    journal.carryJobs(reattach);
    journal.checkpoint();

    const runIds = new Set(table.rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
    const { workdir } = this.#prepared;
    // What a killed run left in the repository goes before the first task. Not with bullmq:
    // a worker may still run a job of the killed run in a worktree this run awaits again.
    if (workdir?.mode === 'worktree' && this.#plan.type !== 'bullmq') await sweepStaleWorktrees(workdir.repo, workdir.sessionId, warn);
    // Every write of the session by what the run hands it to (the backend's id, the lane) goes through it.
    const files = new SessionWriter(session.dir);
    let backend: ExecutionBackend;
    try {
      backend = await openBackend(this.#plan, {
        sessionDir: session.dir,
        sessionId: () => sessionIdOf(session.dir, warn, files),
        path: this.#path,
        pending: runIds,
        left: { batches: leftOpen, jobs: new Map(reattach.map((start) => [start.id, start.job])) },
        record: (entry) => journal.append(entry),
        flush: () => void journal.flush(),
        lost: stop.backendLost,
        warn,
        workersConnected: (count) => events.emit('workers:connected', count),
        attemptRunning: (id, attempt) => events.emit('task:running', { id, attempt }),
        batchProgress: (progress) => events.emit('batch:progress', progress),
      });
    } catch (error) {
      journal.close();
      throw error;
    }
    const { contracts } = this.#prepared;
    // What a task's result changes at run time: its artifacts and their gates, fix rounds, injected roles.
    const dynamics = new SessionDynamics({
      rows: () => table.rows,
      registry: contracts.registry,
      files,
      validates: contracts.validates,
      maxFixRounds: contracts.maxFixRounds,
      rules: contracts.rules,
      topic: pipelineSettings.topic,
      warn,
      injected: (injection) => events.emit('task:injected', injection),
    });
    // report.html at each wave end shows the attempts of the wave: they are flushed first.
    const reporter = this.#options.report?.(session.dir, table, warn, settings.pricing);
    events.on('wave:done', () => {
      journal.flush();
      reporter?.waveEnd();
    });
    const tally = new RunTally(events, runIds.size);
    events.emit('run:start', { session: session.dir, total: runIds.size, waveCount: plan.waveCount, queue: this.#plan.type === 'bullmq' });

    const limits = {
      maxStdoutBytes: settings.maxStdoutBytes,
      maxArtifactsPerTask: settings.maxArtifactsPerTask,
      maxArtifactBytes: settings.maxArtifactBytes,
    };
    // Counted from every run of the session: a resume goes on from what the last one spent.
    const budget = sessionBudget(session.dir, settings, settings.pricing, warn);
    const spent = budget.reached();
    if (spent) stop.budgetReached(spent);
    const sink = new KnowledgeSink({
      sessionDir: session.dir,
      files,
      table,
      discoveryFiles: settings.discoveryFiles ?? (session.config.pipeline === 'generic' ? 'when-rich' : 'always'),
      maxDiscoveryLineBytes: settings.maxDiscoveryLineBytes,
      limits,
      prevContextCap: settings.prevContextCap,
      ...(reporter?.waveContexts ? { waveContexts: reporter.waveContexts } : {}),
      warn,
      pricing: settings.pricing,
      manifests: (ids) => dynamics.manifestsOf(ids),
      onUsage: (lines) => {
        budget.add(lines);
        const reached = budget.reached();
        if (reached) {
          stop.budgetReached(reached);
          // Started but not begun (waiting for an endpoint slot or a batch): they would spend past it.
          backend.holdBack?.();
        }
      },
    });
    // Each model request's tokens are written as its answer arrives: a stop that ends its thread loses none.
    const liveUsage = new LiveUsage(session.dir, (task, attempt, usage) => stop.guarded(() => sink.liveUsage(task, attempt, usage)));
    const pipeline = pipelineFor(session.config.pipeline);
    // The rows of the run by id, once the scheduler holds them: a key reads the context sources' findings.
    let rowById: (id: string) => TaskRow | undefined = () => undefined;
    const cache = await openRunCache({ session, settings, files, limits, runIds, lookup: (id) => rowById(id), warn });
    events.on('wave:done', () => cache.flush());
    const runTask = createTaskRunner({
      backend,
      sink,
      pipeline,
      files,
      topic: pipelineSettings.topic,
      limits,
      warn,
      budgetLeftUsd: () => budget.leftUsd(),
      cache,
      ...(workdir === undefined ? {} : { workdir }),
    });
    const lane = new InteractiveLane({
      handlers: this.#options.interactiveHandlers ?? pipeline.handlers,
      rows: () => table.rows,
      config: session.config,
      sessionDir: session.dir,
      files,
      // Interactive tasks decide anew each time: never from the cache.
      runExecutor: runTask.uncached,
      answers: this.#options.answers ?? new NoAnswers(),
      decided: (event) => events.emit('gate:decided', event),
      artifactsOf: (ids) => dynamics.artifactsOf(ids),
    });
    // A resume goes on in an answers file after the answers its finished gates used.
    lane.resumeAnswers(table.rows);
    const { inFlight } = stop;
    // What the run's own tasks change in tasks.csv, to tell a save from an older copy of the file.
    const ledger = new EditLedger();
    const scheduler = new Scheduler(
      table.rows,
      plan.waves,
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
        branchOf: contracts.branchOf,
        validates: contracts.validates,
        gates: dynamics.gates(),
      },
      {
        runTask: (request) => inFlight.track(request.task.id, runTask(request), stop.keeps),
        runInteractive: (request) => inFlight.track(request.task.id, lane.run(request), (result) => stop.keeps(result.reply)),
        react: (row, result) => dynamics.react(row, result),
      },
      events,
      // Every change is recorded here before its event is emitted: no listener can lose it.
      new OutcomeSink({ journal, knowledge: sink, guarded: stop.guarded, jobs: backend.jobs, changed: ledger.changed, contracts: dynamics, cacheNote: (id) => cache.takeNote(id) }),
    );
    stop.attach(scheduler);
    rowById = (id) => scheduler.rowById(id);

    // A person's save of tasks.csv during the run is merged into it, checked as at the start.
    const intake = new EditIntake({
      table,
      target: scheduler,
      journal,
      ledger,
      check: startChecks({
        pipeline: session.config.pipeline,
        executor: settings.executor,
        files: { tasks: session.displayPath, ...(session.configFile === undefined ? {} : { session: session.configFile }) },
        worktree: workdir?.mode === 'worktree',
      }),
      displayPath: session.displayPath,
      path: this.#path,
      warn,
      edited: (event) => events.emit('tasks:edited', event),
    });
    // tasks.csv follows the run: rewritten on a timer and at each wave end, never over a save it has not merged.
    const checkpointer = new Checkpointer(
      writer,
      journal,
      {
        merge: (saved) => intake.merge(saved),
        canMerge: () => scheduler.canEdit,
        unmergeable: (problem) => {
          this.#unmergeable = unmergeableStopReason(session.displayPath, this.#path, problem);
          warn(`${session.displayPath} was saved in a form csv-wave cannot merge (${problem.message}): no new task starts, and nothing is written over it`);
          stop.stop('edited', this.#unmergeable);
        },
        failed: stop.writeFailed,
      },
      { maxRows: session.config.max_rows, required: requiredColumns(session.config.pipeline) },
    );
    scheduler.onEditPoint(checkpointer.atEditPoint);
    checkpointer.start(events);
    const interrupt = new Interrupt({
      signal: this.#options.signal,
      killSignal: this.#options.killSignal,
      graceSeconds: settings.graceSeconds,
      path: this.#path,
      stop: stop.stop,
      takeBackAll: () => inFlight.takeBackAll(),
      killCommands: () => void backend.cancelAll(),
      warn,
    });
    this.#open = { files, journal, backend, reporter, tally, liveUsage, scheduler, checkpointer, interrupt, cache };
  }

  /**
   * Runs the tasks: resolves once every task handed out has come back or was taken back,
   * with how the run ended. The backend is closed, and nothing of the run left running.
   */
  async drain(): Promise<RunEnding> {
    const { scheduler, interrupt, checkpointer, backend, liveUsage, cache } = this.#opened();
    try {
      return this.#stop.ending(await scheduler.run());
    } finally {
      interrupt.dispose();
      checkpointer.stop();
      cache.close();
      await backend.close();
      // Commands of tasks taken back, including any spawned while the pool was closing, and
      // what they started outside their process groups (setsid): no task of the run is left.
      if (interrupt.takenBack.length > 0) {
        await backend.cancelAll();
        backend.sweep?.();
      }
      await liveUsage.close();
    }
  }

  /** tasks.csv rewritten a last time, the journal closed, context.md and report.html written; emits run:done. */
  finish(ended: RunEnding): RunSummary {
    const { session, settings, table } = this.#prepared;
    const { files, checkpointer, journal, interrupt, reporter, tally, cache } = this.#opened();
    // A save found now is merged into the record, but no task runs any more.
    const late: TasksEditedEvent[] = [];
    const onEdited = (event: TasksEditedEvent) => late.push(event);
    this.#events.on('tasks:edited', onEdited);
    const shown = checkpointer.checkpoint(true);
    this.#events.off('tasks:edited', onEdited);
    if (late.some((event) => event.added.length + event.changed.length > 0) && table.rows.some((row) => statusOf(row) === 'pending')) {
      this.#warn(`${session.displayPath} was saved as the run ended: its changes are kept there, and \`csv-wave resume ${this.#path}\` runs the tasks they add or change`);
    }
    // Closed before the reason is told, so that it can say whether the journal holds everything.
    const journalComplete = journal.close();
    const outcome = runOutcome({
      ended,
      interrupted: interrupt.reason(),
      shown,
      unmergeable: this.#unmergeable,
      writeProblem: this.#stop.writeProblem,
      journalComplete,
      failedOrBlocked: table.rows.some((row) => row.status === 'failed' || skippedForFailure(row)),
      displayPath: session.displayPath,
      path: this.#path,
    });

    const durationMs = performance.now() - this.#startedAt;
    const summary = tally.summary(table.rows, durationMs, outcome, cache.served);
    // A run with nothing to run (a finished session run again) leaves the reports of the
    // run that did the work: context.md keeps its duration, report.html is not rewritten.
    // A report a killed run never wrote is written.
    const idle = summary.total === 0 && outcome.exitCode === 0;
    const finalWaves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
    forgetForcedThatRan(files, table.rows, this.#warn);
    if (!idle || !existsSync(join(session.dir, kLayout.context))) {
      try {
        writeContextReport(files, { table, waves: finalWaves, durationMs, stopReason: outcome.reason, pricing: settings.pricing, cache: cache.served });
      } catch (error) {
        this.#warn(`context.md was not written: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (!idle || !existsSync(join(session.dir, kLayout.report))) reporter?.final();
    this.#events.emit('run:done', summary);
    return summary;
  }

  /** Frees the session lock: after `finish`, or after a phase that threw. */
  release(): void {
    this.#prepared.lock.release();
  }

  #opened(): OpenRun {
    if (this.#open === undefined) throw new Error('SessionRun: open() comes before drain() and finish()');
    return this.#open;
  }
}
