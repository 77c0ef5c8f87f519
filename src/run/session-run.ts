import type { TaskRow } from '../core/task.js';
import type { ExecutionBackend } from '../backend/execution-backend.js';
import { NoAnswers } from '../interactive/answers.js';
import { InteractiveLane } from '../interactive/lane.js';
import type { AnswerSource, InteractiveHandler } from '../interactive/types.js';
import { writeContextReport } from '../knowledge/context-report.js';
import { pipelineFor } from '../pipelines/pipeline-for.js';
import type { PipelineName } from '../schema/session.js';
import { killLeftoverCommands } from '../backend/local/child-groups.js';
import { RunEmitter, type RunSummary } from '../events/events.js';
import { Interrupt } from './interrupt.js';
import { Journal, readJournalWithCarried, readOpenBatches } from '../session/journal.js';
import { jobsToReattach } from './job-reattach.js';
import { createBackend } from './create-backend.js';
import { OutcomeSink } from './outcome-sink.js';
import { RunReporter } from '../report/run-reporter.js';
import type { RunOptions } from '../options/options.js';
import { prepareRun, type PreparedRun } from './prepare-run.js';
import { editedStopReason, runOutcome, type RunEnding } from './run-outcome.js';
import { RunStop } from './run-stop.js';
import { RunTally } from './run-tally.js';
import { Scheduler } from './scheduler.js';
import { createTaskRunner } from './task-runner.js';
import { KnowledgeSink } from './knowledge-sink.js';
import { LocalBackend } from '../backend/local/local-backend.js';
import { backendFromConfig, configuredRate, type BackendChoice } from '../backend/backend-choice.js';
import { skippedForFailure, statusOf } from '../core/skip-cause.js';
import { Checkpointer } from '../session/checkpointer.js';
import { WaveError } from '../errors.js';
import { redisLostReason } from '../backend/bullmq/redis-lost.js';
import type { SecretOptions } from '../backend/bullmq/secret-source.js';
import { sessionBudget } from '../knowledge/budget.js';
import { LiveUsage } from './live-usage.js';
import type { OpenBatch } from '../backend/openai-batch/batch-record.js';
import type { JobStart } from './job-reattach.js';

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
}

/** How a run tells what happens: its events, and its warnings among them. */
interface RunVoice {
  events: RunEmitter;
  warn: (message: string) => void;
}

/** What an open run is made of, in the order `open` builds it: each uses only those above it. */
interface OpenRun {
  journal: Journal;
  backend: ExecutionBackend;
  reporter: RunReporter;
  tally: RunTally;
  liveUsage: LiveUsage;
  scheduler: Scheduler;
  checkpointer: Checkpointer;
  interrupt: Interrupt;
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
  readonly #where: BackendChoice;
  readonly #stop: RunStop;
  #open: OpenRun | undefined;

  /** Options settled and the session held, locked and written once (prepareRun); the caller releases it. */
  static async prepare(path: string, options: RunSessionOptions): Promise<SessionRun> {
    const startedAt = performance.now();
    const events = options.events ?? new RunEmitter();
    const warn = (message: string) => events.emit('warning', message);
    const prepared = await prepareRun(path, options, warn);
    try {
      return new SessionRun(path, options, startedAt, { events, warn }, prepared);
    } catch (error) {
      prepared.lock.release();
      throw error;
    }
  }

  private constructor(path: string, options: RunSessionOptions, startedAt: number, voice: RunVoice, prepared: PreparedRun) {
    this.#path = path;
    this.#options = options;
    this.#startedAt = startedAt;
    this.#events = voice.events;
    this.#warn = voice.warn;
    this.#prepared = prepared;
    this.#where = options.backend ?? backendFromConfig(prepared.session.config.backend);
    if (this.#where.type !== 'bullmq' && options.redisTimeoutSeconds !== undefined) {
      throw new WaveError('USAGE', '--redis-timeout goes with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    if (this.#where.type !== 'bullmq' && options.bullmqSecret !== undefined) {
      throw new WaveError('USAGE', '--secret-file and --insecure-no-secret go with the bullmq backend (--backend bullmq, or session.json\'s "backend")');
    }
    // A batch waits hours at OpenAI for one wave: workers on many machines would hold nothing.
    if (this.#where.type === 'bullmq' && prepared.settings.batch) {
      throw new WaveError('USAGE', '--batch sends the model tasks through OpenAI\'s Batch API from this machine; it does not go with --backend bullmq (drop one of them)');
    }
    this.#stop = new RunStop(path, this.#warn);
  }

  /**
   * Builds what the run is made of, each part from those before it: the journal (emptied,
   * keeping what an earlier run left out), the backend, the reports, the budget, the
   * sinks, the scheduler (told of any stop asked for so far), the checkpointer and the
   * answer to signals. Emits run:start.
   */
  async open(): Promise<void> {
    const { session, settings, table, writer, plan, reset } = this.#prepared;
    const stop = this.#stop;
    const events = this.#events;
    const warn = this.#warn;
    // What an interrupted run left out, read before this run empties the journal: the jobs
    // of its tasks (bullmq) and its open batches (--batch), both kept through this run's checkpoints.
    const reattach = this.#where.type === 'bullmq' ? jobsToReattach(readJournalWithCarried(session.dir), table.rows, reset) : [];
    const leftOpen = readOpenBatches(session.dir);
    const journal = new Journal(session.dir, stop.writeFailed, { attempts: true });
    journal.carry(leftOpen);
    journal.carryJobs(reattach);
    journal.checkpoint();

    const runIds = new Set(table.rows.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
    let backend: ExecutionBackend;
    let jobs: OutcomeJobs | undefined;
    try {
      ({ backend, jobs } = await this.#openBackend(journal, runIds, leftOpen, reattach));
    } catch (error) {
      journal.close();
      throw error;
    }
    if (leftOpen.length > 0 && !settings.batch) {
      warn(`${leftOpen.length} batch(es) of an earlier --batch run are still open; this run sends its tasks one by one. Stop it and resume with --batch to take their answers instead`);
    }
    // report.html at each wave end shows the attempts of the wave: they are flushed first.
    const reporter = new RunReporter(session.dir, table, warn);
    events.on('wave:done', () => {
      journal.flush();
      reporter.waveEnd();
    });
    const tally = new RunTally(events, runIds.size);
    events.emit('run:start', { session: session.dir, total: runIds.size, waveCount: plan.waveCount });

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
      table,
      discoveryFiles: settings.discoveryFiles ?? (session.config.pipeline === 'generic' ? 'when-rich' : 'always'),
      maxDiscoveryLineBytes: settings.maxDiscoveryLineBytes,
      limits,
      prevContextCap: settings.prevContextCap,
      waveContexts: reporter.waveContexts,
      warn,
      pricing: settings.pricing,
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
    const runTask = createTaskRunner({ backend, sink, pipeline, sessionDir: session.dir, topic: session.config.topic ?? '', limits, warn });
    const lane = new InteractiveLane({
      handlers: this.#options.interactiveHandlers ?? pipeline.handlers,
      rows: () => table.rows,
      config: session.config,
      sessionDir: session.dir,
      runExecutor: runTask,
      answers: this.#options.answers ?? new NoAnswers(),
    });
    const { inFlight } = stop;
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
      },
      {
        runTask: (request) => inFlight.track(request.task.id, runTask(request), stop.keeps),
        runInteractive: (request) => inFlight.track(request.task.id, lane.run(request), (result) => stop.keeps(result.reply)),
      },
      events,
      // Every change is recorded here before its event is emitted: no listener can lose it.
      new OutcomeSink({ journal, knowledge: sink, guarded: stop.guarded, jobs }),
    );
    stop.attach(scheduler);

    // tasks.csv follows the run: rewritten on a timer and at each wave end, never over a person's edit.
    const checkpointer = new Checkpointer(writer, journal, {
      edited: () => stop.stop('edited', editedStopReason(session.displayPath, this.#path)),
      failed: stop.writeFailed,
    });
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
    this.#open = { journal, backend, reporter, tally, liveUsage, scheduler, checkpointer, interrupt };
  }

  /**
   * Runs the tasks: resolves once every task handed out has come back or was taken back,
   * with how the run ended. The backend is closed, and nothing of the run left running.
   */
  async drain(): Promise<RunEnding> {
    const { scheduler, interrupt, checkpointer, backend, liveUsage } = this.#opened();
    try {
      return this.#stop.ending(await scheduler.run());
    } finally {
      interrupt.dispose();
      checkpointer.stop();
      await backend.close();
      // Commands of tasks taken back, including any spawned while the pool was closing, and
      // what they started outside their process groups (setsid): no task of the run is left.
      if (interrupt.takenBack.length > 0) {
        await backend.cancelAll();
        killLeftoverCommands(this.#prepared.session.dir);
      }
      await liveUsage.close();
    }
  }

  /** tasks.csv rewritten a last time, the journal closed, context.md and report.html written; emits run:done. */
  finish(ended: RunEnding): RunSummary {
    const { session, settings, table } = this.#prepared;
    const { checkpointer, journal, interrupt, reporter, tally } = this.#opened();
    const shown = ended.stopped !== 'edited' && checkpointer.checkpoint();
    // Closed before the reason is told, so that it can say whether the journal holds everything.
    const journalComplete = journal.close();
    const outcome = runOutcome({
      ended,
      interrupted: interrupt.reason(),
      shown,
      edited: checkpointer.edited,
      writeProblem: this.#stop.writeProblem,
      journalComplete,
      failedOrBlocked: table.rows.some((row) => row.status === 'failed' || skippedForFailure(row)),
      displayPath: session.displayPath,
      path: this.#path,
    });

    const durationMs = performance.now() - this.#startedAt;
    const finalWaves = new Map(table.rows.map((row) => [row.id, Number(row.wave)]));
    try {
      writeContextReport(session.dir, { table, waves: finalWaves, durationMs, stopReason: outcome.reason, pricing: settings.pricing });
    } catch (error) {
      this.#warn(`context.md was not written: ${error instanceof Error ? error.message : String(error)}`);
    }
    reporter.final();
    const summary = tally.summary(table.rows, durationMs, outcome);
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

  /** Where the attempts run: bullmq jobs, OpenAI's Batch API (--batch), or this machine. */
  async #openBackend(
    journal: Journal,
    runIds: ReadonlySet<string>,
    leftOpen: readonly OpenBatch[],
    reattach: readonly JobStart[],
  ): Promise<{ backend: ExecutionBackend; jobs?: OutcomeJobs }> {
    const { session, settings } = this.#prepared;
    const where = this.#where;
    if (where.type === 'bullmq') {
      const stop = this.#stop;
      // BullMQ and ioredis are loaded only by a run that uses them: they are most of a start-up.
      const remote = await (await import('../backend/bullmq/open-coordinator.js')).openCoordinator(
        session.dir,
        where.url,
        this.#warn,
        // Redis away too long stops the run like a failed write: no new task, the running ones back to pending.
        { redisTimeoutSeconds: this.#options.redisTimeoutSeconds, lost: (reason) => stop.backendLost(redisLostReason(reason, this.#path)), secret: this.#options.bullmqSecret },
        where.rate ?? configuredRate(session.config.backend),
        (count) => this.#events.emit('workers:connected', count),
        {
          reattach: new Map(reattach.map((start) => [start.id, start.job])),
          // The journal is flushed before each add: every job in Redis is named by a journaled start.
          beforeAdd: () => journal.flush(),
          // Another coordinator took the session id over (this one stopped beating): its jobs are no longer this run's.
          superseded: (reason) =>
            stop.backendLost(
              `Stopped: ${reason}. No new task was started; the tasks whose jobs were out went back to pending. Stop the other run, then run \`csv-wave resume ${this.#path}\`.`,
            ),
        },
      );
      const jobs = { started: (task: string, attempt: number) => remote.jobFor(task, attempt), finished: (task: string, attempt: number) => remote.jobOf(task, attempt) };
      return { backend: remote, jobs };
    }
    if (settings.batch) return { backend: await createBackend(settings, { open: leftOpen, pending: runIds, journal, events: this.#events, warn: this.#warn }) };
    const backend = new LocalBackend({
      sessionDir: session.dir,
      threads: settings.threads,
      tasksPerThread: Math.ceil(settings.concurrency / settings.threads),
      workerMemoryMb: settings.workerMemoryMb,
      // One limit per run is one per endpoint: a run talks to one model server.
      endpointConcurrency: settings.executor.type === 'openai' ? settings.endpointConcurrency : undefined,
    });
    return { backend };
  }
}

/** The jobs of attempts run elsewhere, for the journal's start and finish entries (OutcomeSinkSetup.jobs). */
type OutcomeJobs = NonNullable<ConstructorParameters<typeof OutcomeSink>[0]['jobs']>;
