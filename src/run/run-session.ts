import type { TaskRow } from '../core/task.js';
import type { TasksTable } from '../csv/tasks-table.js';
import type { WorkerReply } from '../executors/messages.js';
import { NoAnswers } from '../interactive/answers.js';
import { InteractiveLane } from '../interactive/lane.js';
import type { AnswerSource, InteractiveHandler } from '../interactive/types.js';
import { writeContextReport } from '../knowledge/context-report.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import type { PipelineName } from '../schema/session.js';
import { killLeftoverCommands } from '../backend/local/child-groups.js';
import { RunEmitter, type RunSummary } from '../events/events.js';
import { InFlight } from './in-flight.js';
import { Interrupt } from './interrupt.js';
import { Journal, readJournalWithCarried, readOpenBatches } from '../session/journal.js';
import { jobsToReattach } from './job-reattach.js';
import { createBackend } from './create-backend.js';
import { OutcomeSink } from './outcome-sink.js';
import type { RunOptions } from '../options/options.js';
import { prepareRun } from './prepare-run.js';
import { editedStopReason, runOutcome, type RunEnding } from './run-outcome.js';
import { RunStop } from './run-stop.js';
import { RunTally } from './run-tally.js';
import { Scheduler } from './scheduler.js';
import { createTaskRunner } from './task-runner.js';
import { KnowledgeSink, type WaveFilesSeen } from './knowledge-sink.js';
import { LocalBackend } from '../backend/local/local-backend.js';
import { backendFromConfig, configuredRate, type BackendChoice } from '../backend/backend-choice.js';
import { skippedForFailure, statusOf } from '../core/skip-cause.js';
import { Checkpointer } from '../session/checkpointer.js';
import { WaveError } from '../errors.js';
import { redisLostReason } from '../backend/bullmq/redis-lost.js';
import type { SecretOptions } from '../backend/bullmq/secret-source.js';
import { sessionBudget } from '../knowledge/budget.js';
import { LiveUsage } from './live-usage.js';

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

/** Builds the run's report once the session is open and its tasks read. */
export type RunReportFactory = (sessionDir: string, table: TasksTable, warn: (message: string) => void) => RunReport;

/**
 * Runs every pending task of a session and resolves with a summary. Holds the session
 * lock throughout; every state change is journaled before it is shown in tasks.csv, so
 * a crash at any instant loses nothing the engine had accepted.
 */
export async function runSession(path: string, options: RunSessionOptions = {}): Promise<RunSummary> {
  const startedAt = performance.now();
  const events = options.events ?? new RunEmitter();
  const warn = (message: string) => events.emit('warning', message);
  const { session, settings, table, writer, lock, plan, reset } = await prepareRun(path, options, warn);
  try {
    const where = options.backend ?? backendFromConfig(session.config.backend);
    if (where.type !== 'bullmq' && options.redisTimeoutSeconds !== undefined) {
      throw new WaveError('USAGE', '--redis-timeout goes with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    if (where.type !== 'bullmq' && options.bullmqSecret !== undefined) {
      throw new WaveError('USAGE', '--secret-file and --insecure-no-secret go with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    // A batch waits hours at OpenAI for one wave: workers on many machines would hold nothing.
    if (where.type === 'bullmq' && settings.batch) {
      throw new WaveError('USAGE', '--batch sends the model tasks through OpenAI\'s Batch API from this machine; it does not go with --backend bullmq (drop one of them)');
    }
    // Redis away too long stops the run like a failed write: no new task, the running ones back to pending.
    const redisLost = (reason: string) => {
      stop.stop('io', redisLostReason(reason, path));
      inFlight.takeBackAll();
    };
    // Another coordinator took the session id over (this one stopped beating): its jobs are no longer this run's.
    const superseded = (reason: string) => {
      stop.stop('io', `Stopped: ${reason}. No new task was started; the tasks whose jobs were out went back to pending. Stop the other run, then run \`csv-wave resume ${path}\`.`);
      inFlight.takeBackAll();
    };
    // The jobs an interrupted run left for tasks of this one, read before this run empties the journal.
    const reattach = where.type === 'bullmq' ? jobsToReattach(readJournalWithCarried(session.dir), table.rows, reset) : [];
    // BullMQ and ioredis are loaded only by a run that uses them: they are most of a start-up.
    const remote =
      where.type === 'bullmq'
        ? await (await import('../backend/bullmq/open-coordinator.js')).openCoordinator(
            session.dir,
            where.url,
            warn,
            { redisTimeoutSeconds: options.redisTimeoutSeconds, lost: redisLost, secret: options.bullmqSecret },
            where.rate ?? configuredRate(session.config.backend),
            (count) => events.emit('workers:connected', count),
            // The journal is flushed before each add: every job in Redis is named by a journaled start.
            { reattach: new Map(reattach.map((start) => [start.id, start.job])), beforeAdd: () => journal.flush(), superseded },
          )
        : undefined;
    const { waves, waveCount } = plan;
    const stop = new RunStop(path, warn);
    const { writeFailed, guarded } = stop;
    const journal = new Journal(session.dir, writeFailed, { attempts: true });
    const jobs = remote && { started: (task: string, attempt: number) => remote.jobFor(task, attempt), finished: (task: string, attempt: number) => remote.jobOf(task, attempt) };
    // report.html at each wave end shows the attempts of the wave: they are flushed first.
    const reporter = options.report?.(session.dir, table, warn);
    events.on('wave:done', () => {
      journal.flush();
      reporter?.waveEnd();
    });
    // Batches an earlier run left open are known only to its journal: kept through this run's checkpoints.
    const leftOpen = readOpenBatches(session.dir);
    journal.carry(leftOpen);
    journal.carryJobs(reattach);
    journal.checkpoint();
    if (leftOpen.length > 0 && !settings.batch) {
      warn(`${leftOpen.length} batch(es) of an earlier --batch run are still open; this run sends its tasks one by one. Stop it and resume with --batch to take their answers instead`);
    }

    const runIds = new Set(table.rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
    const tally = new RunTally(events, runIds.size);
    events.emit('run:start', { session: session.dir, total: runIds.size, waveCount });
    const backend =
      remote ??
      (settings.batch
        ? await createBackend(settings, { open: leftOpen, pending: runIds, journal, events, warn })
        : new LocalBackend({
            sessionDir: session.dir,
            threads: settings.threads,
            tasksPerThread: Math.ceil(settings.concurrency / settings.threads),
            workerMemoryMb: settings.workerMemoryMb,
            // One limit per run is one per endpoint: a run talks to one model server.
            endpointConcurrency: settings.executor.type === 'openai' ? settings.endpointConcurrency : undefined,
          }));
    const limits = {
      maxStdoutBytes: settings.maxStdoutBytes,
      maxArtifactsPerTask: settings.maxArtifactsPerTask,
      maxArtifactBytes: settings.maxArtifactBytes,
    };
    // Counted from every run of the session: a resume goes on from what the last one spent.
    const budget = sessionBudget(session.dir, settings, settings.pricing, warn);
    const spent = budget.reached();
    if (spent) stop.stop('halt', budgetStopReason(spent, path));
    const sink = new KnowledgeSink({
      sessionDir: session.dir,
      table,
      discoveryFiles: settings.discoveryFiles ?? (session.config.pipeline === 'generic' ? 'when-rich' : 'always'),
      maxDiscoveryLineBytes: settings.maxDiscoveryLineBytes,
      limits,
      prevContextCap: settings.prevContextCap,
      ...(reporter?.waveContexts ? { waveContexts: reporter.waveContexts } : {}),
      warn,
      pricing: settings.pricing,
      onUsage: (lines) => {
        budget.add(lines);
        const reached = budget.reached();
        if (reached) {
          stop.stop('halt', budgetStopReason(reached, path));
          // Started but not begun (waiting for an endpoint slot or a batch): they would spend past it.
          backend.holdBack?.();
        }
      },
    });
    // Each model request's tokens are written as its answer arrives: a stop that ends its thread loses none.
    const liveUsage = new LiveUsage(session.dir, (task, attempt, usage) => guarded(() => sink.liveUsage(task, attempt, usage)));
    const pipeline = pipelineFor(session.config.pipeline);
    const runTask = createTaskRunner({
      backend,
      sink,
      pipeline,
      sessionDir: session.dir,
      topic: session.config.topic ?? '',
      limits,
      warn,
    });
    const lane = new InteractiveLane({
      handlers: options.interactiveHandlers ?? pipeline.handlers,
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
      return stop.writeProblem === undefined || reply.kind !== 'error';
    };
    // Tasks taken back are told to the scheduler, declared below: only called once it runs.
    const inFlight = new InFlight((ids) => scheduler.takeBack(ids));
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
      // Every change is recorded here before its event is emitted: no listener can lose it.
      new OutcomeSink({ journal, knowledge: sink, guarded, jobs }),
    );
    stop.attach(scheduler);

    // tasks.csv follows the run: rewritten on a timer and at each wave end, never over a person's edit.
    const checkpointer = new Checkpointer(writer, journal, {
      edited: () => stop.stop('edited', editedStopReason(session.displayPath, path)),
      failed: writeFailed,
    });
    checkpointer.start(events);
    const interrupt = new Interrupt({
      signal: options.signal,
      killSignal: options.killSignal,
      graceSeconds: settings.graceSeconds,
      path,
      stop: stop.stop,
      takeBackAll: () => inFlight.takeBackAll(),
      killCommands: () => void backend.cancelAll(),
      warn,
    });

    let ended: RunEnding;
    try {
      // The scheduler ends once every task it handed out has come back or was taken back.
      // A run that ended on tasks taken back tells the first stop asked for (RunFacts.ended),
      // even when the scheduler had stopped on its own before (a halt, then a signal).
      const scheduled = await scheduler.run();
      ended = inFlight.tookBack ? (stop.first ?? scheduled) : scheduled;
    } finally {
      interrupt.dispose();
      checkpointer.stop();
      await backend.close();
      // Commands of tasks taken back, including any spawned while the pool was closing, and
      // what they started outside their process groups (setsid): no task of the run is left.
      if (interrupt.takenBack.length > 0) {
        await backend.cancelAll();
        killLeftoverCommands(session.dir);
      }
      await liveUsage.close();
    }
    const shown = ended.stopped !== 'edited' && checkpointer.checkpoint();
    // Closed before the reason is told, so that it can say whether the journal holds everything.
    const journalComplete = journal.close();
    const outcome = runOutcome({
      ended,
      interrupted: interrupt.reason(),
      shown,
      edited: checkpointer.edited,
      writeProblem: stop.writeProblem,
      journalComplete,
      failedOrBlocked: table.rows.some((row) => row.status === 'failed' || skippedForFailure(row)),
      displayPath: session.displayPath,
      path,
    });

    const durationMs = performance.now() - startedAt;
    const finalWaves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
    try {
      writeContextReport(session.dir, { table, waves: finalWaves, durationMs, stopReason: outcome.reason, pricing: settings.pricing });
    } catch (error) {
      warn(`context.md was not written: ${error instanceof Error ? error.message : String(error)}`);
    }
    reporter?.final();
    const summary = tally.summary(table.rows, durationMs, outcome);
    events.emit('run:done', summary);
    return summary;
  } finally {
    lock.release();
  }
}

/** Why a run stopped at its budget, and how to go on. */
function budgetStopReason(reached: string, path: string): string {
  return `Halted: ${reached}; no new tasks were started. Raise the budget and run \`csv-wave resume ${path}\` to go on.`;
}
