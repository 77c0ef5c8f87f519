import type { TaskRow } from '../core/task.js';
import type { Effect, RefusedChange } from '../core/effects.js';
import { SchedulingCore } from '../core/scheduling-core.js';
import type { SessionEdit, TaskStanding } from '../core/session-changes.js';
import type { WorkerReply, WorkerRequest } from '../executors/messages.js';
import { cleanText } from '../text/clean-text.js';
import { describe } from '../executors/module.js';
import { scrubSecrets } from '../text/secret-scrubber.js';
import { kRetryableClasses } from '../executors/types.js';
import type { HandlerResult } from '../interactive/types.js';
import type {
  AttemptDetail,
  AttemptWorker,
  RunEmitter,
  StopReason,
  TaskDoneEvent,
  TaskRetryEvent,
  TaskStartEvent,
  TasksChangedEvent,
} from '../events/events.js';
import type { CoreOptions, HaltPolicy } from '../core/core-options.js';
import { AttemptPlanner, type PlanOptions } from './attempt-planner.js';
import type { PrevContexts } from './prev-contexts.js';

/** Runs a prepared request: on the worker pool, or in the interactive lane. */
export interface TaskRunner {
  runTask(request: WorkerRequest): Promise<WorkerReply>;
  /** An interactive task may also change the session (dynamic tasks, rewiring, skips). */
  runInteractive(request: WorkerRequest): Promise<HandlerResult>;
  /**
   * What a finished attempt changes in the session besides its row, for any task (artifact
   * gates and fix rounds, injected roles: dynamic/session-dynamics.ts), or its reply refused;
   * called before the core takes it. @default the result as it is
   */
  react?(row: TaskRow, result: HandlerResult): HandlerResult;
}

export interface SchedulerOptions extends PlanOptions, Pick<CoreOptions, 'branchOf' | 'validates' | 'gates'> {
  concurrency: number;
  schedule: 'waves' | 'eager';
  retries: number;
  retryBaseMs: number;
  halt: HaltPolicy | undefined;
}

/**
 * What the run records of each change, told before the change's public event (the outcome
 * sink, outcome-sink.ts): no listener runs before the change is durable.
 */
export interface RunRecorder {
  /** An attempt starts (before task:start). */
  started(event: TaskStartEvent): void;
  /** An attempt failed and will be retried (before task:retry). */
  retried(event: TaskRetryEvent): void;
  /** A task finished, completed, failed or skipped, with its last reply (before task:done). */
  finished(row: TaskRow, reply: WorkerReply | undefined, event: TaskDoneEvent, skips?: readonly { id: string; error: string }[]): void;
  /** An interactive task added or rewired tasks, or an edit of tasks.csv changed them (before tasks:changed). */
  tasksChanged(change: RecordedChange): void;
  /**
   * Wave N is about to run (waves) or all its tasks have started (eager). `contexts` holds
   * the prev_context its tasks' requests got or will get: its wave file writes the same.
   */
  waveReady(wave: number, contexts: PrevContexts): void;
}

export type { StopReason };

/** A change of the session's tasks as the run records it: the public event, who made it, and what rewired tasks had before. */
export interface RecordedChange extends TasksChangedEvent {
  by: 'task' | 'edit';
  /** The deps and context_from of the tasks an interactive task rewired, before it did. */
  previous: { id: string; deps: string; context_from: string }[];
}

type Reply = WorkerReply | RefusedChange;

/**
 * The event loop around the scheduling core (src/core/): it performs the core's effects
 * (timers, the clock, the recorder, events, the task runner) and feeds what comes back to
 * it. The rules of what runs when are all in the core. Each change is told to the
 * recorder, then emitted.
 */
export class Scheduler {
  readonly #events: RunEmitter;
  readonly #runner: TaskRunner;
  readonly #recorder: RunRecorder;
  readonly #core: SchedulingCore<WorkerReply>;
  readonly #planner: AttemptPlanner;
  readonly #retryTimers = new Map<string, NodeJS.Timeout>();
  /** When each task's first attempt started, for task:done's durationMs. */
  readonly #startedAt = new Map<string, number>();
  /** When each running task's current attempt started, when it is not its first (that one is #startedAt): a queue wait is measured from it. */
  readonly #attemptAt = new Map<string, number>();
  /** The earlier attempts of a running task that workers ran (--backend bullmq): see WorkerWaits. */
  readonly #waits = new Map<string, WorkerWaits>();
  #resolve: ((outcome: { stopped: StopReason | undefined; reason: string }) => void) | undefined;
  /** Told at each edit point of the core: it may feed an edit of tasks.csv then (`edit`). */
  #editPoint: (() => void) | undefined;
  /** Effects being performed (nested: a listener fed an event back); 0 between events. */
  #depth = 0;
  #atEditPoint = false;

  constructor(
    rows: TaskRow[],
    waves: ReadonlyMap<string, number>,
    runIds: ReadonlySet<string>,
    options: SchedulerOptions,
    runner: TaskRunner,
    events: RunEmitter,
    recorder: RunRecorder,
  ) {
    this.#runner = runner;
    this.#events = events;
    this.#recorder = recorder;
    this.#core = new SchedulingCore<WorkerReply>(rows, waves, runIds, {
      schedule: options.schedule,
      concurrency: options.concurrency,
      retries: options.retries,
      retryBaseMs: options.retryBaseMs,
      halt: options.halt,
      retryable: kRetryableClasses,
      random: Math.random,
      ...(options.branchOf === undefined ? {} : { branchOf: options.branchOf }),
      ...(options.validates === undefined ? {} : { validates: options.validates }),
      ...(options.gates === undefined ? {} : { gates: options.gates }),
    });
    this.#planner = new AttemptPlanner(options, (id) => this.#core.rowById(id));
  }

  /** Runs every task of the run; resolves when none is left that can start. */
  run(): Promise<{ stopped: StopReason | undefined; reason: string }> {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      this.#perform(this.#core.start());
    });
  }

  /** Any row of the run by id, tasks added during the run included. */
  rowById(id: string): TaskRow | undefined {
    return this.#core.rowById(id);
  }

  /** Stops starting tasks; running ones finish. */
  stop(reason: StopReason, explanation: string): void {
    this.#perform(this.#core.stop(reason, explanation));
  }

  /** Takes running tasks back: pending again, no longer out; the run ends once nothing else is. */
  takeBack(ids: readonly string[]): void {
    for (const id of ids) this.#perform(this.#core.takeBack(id));
  }

  /** Where a task stands for an edit of tasks.csv (undefined: no such task). */
  standing(id: string): TaskStanding | undefined {
    return this.#core.standing(id);
  }

  /**
   * Whether an edit can be fed now: between events, or at an edit point. Not while the
   * effects of an event are performed (a wave:done listener): the edit would come between
   * a wave's start and its tasks.
   */
  get canEdit(): boolean {
    return this.#depth === 0 || this.#atEditPoint;
  }

  /**
   * Applies a person's edit of tasks.csv, merged and validated (session/edits/): recorded,
   * then told (tasks:changed), then anything it made ready starts. Returns why the core
   * refused it (the session unchanged), or undefined.
   */
  edit(edit: SessionEdit): string | undefined {
    if (!this.canEdit) throw new Error('Scheduler.edit: an edit is fed between events or at an edit point');
    const problem = this.#core.checkEdit(edit);
    if (problem !== undefined) return problem;
    this.#perform(this.#core.edit(edit));
    return undefined;
  }

  /** `listener` is told at each edit point: before the gate moves on (schedule `waves`) and before the run ends. */
  onEditPoint(listener: () => void): void {
    this.#editPoint = listener;
  }

  /** Performs each effect as the core yields it: the core sees what a listener did meanwhile. */
  #perform(effects: Iterable<Effect<Reply>>): void {
    this.#depth++;
    try {
      this.#performEach(effects);
    } finally {
      this.#depth--;
    }
  }

  #performEach(effects: Iterable<Effect<Reply>>): void {
    for (const effect of effects) {
      switch (effect.type) {
        case 'dispatch':
          this.#dispatch(effect);
          break;
        case 'retry':
          this.#retry(effect);
          break;
        case 'cancel-retry':
          clearTimeout(this.#retryTimers.get(effect.id));
          this.#retryTimers.delete(effect.id);
          break;
        case 'finished':
          this.#finished(effect);
          break;
        case 'wave-file':
          this.#recorder.waveReady(effect.wave, this.#planner.contexts);
          break;
        case 'wave-start':
          this.#events.emit('wave:start', { wave: effect.wave, tasks: effect.tasks });
          break;
        case 'wave-done':
          this.#events.emit('wave:done', { wave: effect.wave, completed: effect.completed, failed: effect.failed, skipped: effect.skipped });
          break;
        case 'tasks-changed': {
          const change: TasksChangedEvent = { added: effect.added, updated: effect.updated, removed: effect.removed, waveCount: effect.waveCount };
          this.#recorder.tasksChanged({ ...change, by: effect.by, previous: effect.previous });
          this.#events.emit('tasks:changed', change);
          break;
        }
        case 'edit-point':
          this.#atEditPoint = true;
          try {
            this.#editPoint?.();
          } finally {
            this.#atEditPoint = false;
          }
          break;
        case 'run-done':
          this.#resolve?.({ stopped: effect.stopped, reason: effect.reason });
          this.#resolve = undefined;
          break;
      }
    }
  }

  #dispatch({ row, wave, attempt, interactive, isolated }: Extract<Effect<Reply>, { type: 'dispatch' }>): void {
    if (attempt === 1) {
      this.#startedAt.set(row.id, performance.now());
      this.#attemptAt.delete(row.id);
      this.#waits.delete(row.id);
    } else {
      this.#attemptAt.set(row.id, performance.now());
    }
    const start: TaskStartEvent = { id: row.id, wave, attempt };
    this.#recorder.started(start);
    this.#events.emit('task:start', start);
    const request = this.#planner.request(row, wave, attempt, isolated);
    const settle = (result: HandlerResult) => {
      let reacted = result;
      try {
        reacted = this.#runner.react?.(row, result) ?? result;
      } catch (error) {
        // A result the session's contracts cannot take (a bug, or a write that failed) fails its task, saying why.
        reacted = { reply: { kind: 'error', errorClass: 'task-failure', error: scrubSecrets(cleanText(describe(error))) } };
      }
      this.#perform(this.#core.settled(row.id, reacted.reply, reacted.changes));
    };
    // An interactive handler that threw: its message is task output like any other.
    const threw = (error: unknown) =>
      settle({ reply: { kind: 'error', errorClass: 'task-failure', error: scrubSecrets(cleanText(describe(error))) } });
    // One `then` per attempt, not a chain of three: 100,000 attempts may wait at once.
    if (interactive) void this.#runner.runInteractive(request).then(settle, threw);
    else void this.#runner.runTask(request).then((reply) => settle({ reply }), threw);
  }

  #retry({ id, attempt, reply, delayMs }: Extract<Effect<Reply>, { type: 'retry' }>): void {
    if (reply.kind !== 'error') return;
    const worker = this.#workerOf(id, reply, performance.now());
    this.#attemptAt.delete(id);
    if (worker !== undefined) {
      const waits = this.#waits.get(id) ?? { queuedMs: 0, besidesMs: 0 };
      waits.queuedMs += worker.attempt.queuedMs;
      waits.besidesMs += worker.besidesMs;
      this.#waits.set(id, waits);
    }
    const retry: TaskRetryEvent = { id, attempt, errorClass: reply.errorClass, error: reply.error, delayMs, ...attemptDetail(reply, worker?.attempt) };
    this.#recorder.retried(retry);
    this.#events.emit('task:retry', retry);
    const timer = setTimeout(() => {
      this.#retryTimers.delete(id);
      this.#perform(this.#core.retryDue(id));
    }, delayMs);
    this.#retryTimers.set(id, timer);
  }

  /**
   * The worker that ran task `id`'s attempt just ended, as its signed reply tells it
   * (--backend bullmq), and how long its job waited besides, measured here: this machine's
   * time from the attempt's start to `now`, less the worker's execution time (its own
   * clock's). No wall time of another machine is subtracted from ours.
   */
  #workerOf(id: string, reply: Reply, now: number): { attempt: AttemptWorker; besidesMs: number } | undefined {
    const ran = 'worker' in reply ? reply.worker : undefined;
    if (ran === undefined) return undefined;
    const began = this.#attemptAt.get(id) ?? this.#startedAt.get(id) ?? now;
    const besidesMs = now - began - ran.ms;
    return { attempt: { host: ran.host, pid: ran.pid, ranMs: ran.ms, queuedMs: Math.max(0, Math.round(besidesMs)) }, besidesMs };
  }

  #finished({ row, wave, status, reply, attempts, skips }: Extract<Effect<Reply>, { type: 'finished' }>): void {
    const now = performance.now();
    const worker = reply === undefined ? undefined : this.#workerOf(row.id, reply, now);
    const startedAt = this.#startedAt.get(row.id);
    const earlier = this.#waits.get(row.id);
    this.#startedAt.delete(row.id);
    this.#attemptAt.delete(row.id);
    this.#waits.delete(row.id);
    // The time its jobs waited is left out, each on this machine's clock: the workers' execution times, with the retry waits between them.
    const besidesMs = (earlier?.besidesMs ?? 0) + (worker?.besidesMs ?? 0);
    const queued = worker === undefined && earlier === undefined ? {} : { queuedMs: (earlier?.queuedMs ?? 0) + (worker?.attempt.queuedMs ?? 0) };
    const done: TaskDoneEvent = {
      id: row.id,
      wave,
      status,
      findings: row.findings,
      gc_signal: row.gc_signal,
      severity_summary: row.severity_summary,
      error: row.error,
      ...(row.route === '' ? {} : { route: row.route }),
      attempts,
      durationMs: attempts > 0 && startedAt !== undefined ? Math.max(0, now - startedAt - besidesMs) : 0,
      ...queued,
      ...(reply?.kind === 'error' ? { errorClass: reply.errorClass } : status === 'failed' && reply ? { errorClass: 'task-failure' as const } : {}),
      ...(reply ? attemptDetail(reply, worker?.attempt) : {}),
    };
    this.#planner.contexts.finished(row.id);
    this.#recorder.finished(row, reply, done, skips);
    this.#events.emit('task:done', done);
  }
}

/**
 * The attempts of a task that workers ran before its current one (--backend bullmq), summed:
 * the time their jobs waited for a worker (`queuedMs`, as shown), and the coordinator's time
 * for them less the workers' execution times (`besidesMs`, negative when a worker ran longer
 * than this run waited for it), which task:done's durationMs leaves out.
 */
interface WorkerWaits {
  queuedMs: number;
  besidesMs: number;
}

/** The thread, tokens and worker of an attempt, for the attempts log (absent fields left out). */
function attemptDetail(reply: Reply, worker: AttemptWorker | undefined): AttemptDetail {
  return {
    ...(!('thread' in reply) || reply.thread === undefined ? {} : { thread: reply.thread }),
    ...(!('usage' in reply) || reply.usage === undefined ? {} : { usage: reply.usage }),
    ...(worker === undefined ? {} : { worker }),
  };
}
