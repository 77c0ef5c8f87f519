import { EventEmitter } from 'node:events';
import type { TaskOutcome, TaskRow } from '../core/task.js';
import type { TaskStatus } from '../schema/row.js';
import type { ErrorClass, TokenUsage } from '../executors/types.js';
import type { CacheNote } from '../executors/messages.js';
import type { StopReason } from '../core/stop-reason.js';
import type { GateDecidedEvent } from '../interactive/types.js';
import { emitToEach, listenerFailureText, type ListenerFailure } from './safe-emit.js';

/** What the attempts log needs of an attempt beyond its outcome. */
export interface AttemptDetail {
  /** The worker thread that ran it, when a worker answered. */
  thread?: number;
  usage?: TokenUsage;
  /** With --backend bullmq: the `csv-wave worker` that ran it, when its signed reply told it. */
  worker?: AttemptWorker;
  /** A completed result's input key, and whether it came from the cache (docs/cache.md). */
  cache?: CacheNote;
}

/** An attempt a `csv-wave worker` ran (--backend bullmq), as the attempts log records it. */
export interface AttemptWorker {
  /** The worker's host name and process id. */
  host: string;
  pid: number;
  /** The attempt's execution time on the worker, by the worker's monotonic clock. */
  ranMs: number;
  /**
   * How long its job waited besides (in the queue, for a worker to take it, and for the
   * reply to come back): the coordinator's time from the attempt's start to its reply, on
   * its own monotonic clock, less `ranMs`; 0 when the worker ran longer than this run
   * waited (a job a resume awaited again).
   */
  queuedMs: number;
}

export interface TaskStartEvent {
  id: string;
  wave: number;
  attempt: number;
}

/** An attempt that waited in a queue for a worker (--backend bullmq) was taken by one: it runs from now. */
export interface TaskRunningEvent {
  id: string;
  attempt: number;
}

export interface TaskRetryEvent extends AttemptDetail {
  id: string;
  attempt: number;
  errorClass: ErrorClass;
  error: string;
  delayMs: number;
}

export interface TaskDoneEvent extends AttemptDetail, TaskOutcome {
  id: string;
  wave: number;
  /** Why its last attempt failed, when it failed. */
  errorClass?: ErrorClass;
  /** The attempt that finished it; 0 for a task skipped without running. */
  attempts: number;
  /**
   * From its first attempt's start to its end (retry waits included), less the time its
   * attempts' jobs waited for a worker (--backend bullmq, `queuedMs`): for one attempt on a
   * worker, its execution time there.
   */
  durationMs: number;
  /** With --backend bullmq: how long its attempts' jobs waited besides running, all together; absent when no worker told its time. */
  queuedMs?: number;
}

/**
 * Tasks an interactive task appended, and pending ones it rewired; or what a person's save
 * of tasks.csv during the run added, changed and removed (docs/durability.md).
 */
export interface TasksChangedEvent {
  added: TaskRow[];
  /** New cells of tasks: deps and context_from, and (an edit) any other input cell in `cells`. */
  updated: { id: string; deps?: string; context_from?: string; cells?: Record<string, string> }[];
  /** Tasks an edit of tasks.csv removed (they had not started). */
  removed: string[];
  waveCount: number;
}

/**
 * A person's save of tasks.csv, merged during the run (docs/durability.md): the tasks whose
 * cells it changed, the tasks it added and removed. What the run kept or left out of it is
 * in `notices`, each also told as a warning.
 */
export interface TasksEditedEvent {
  /** tasks.csv as messages name it. */
  file: string;
  changed: string[];
  added: string[];
  removed: string[];
  notices: string[];
}

export interface BatchProgressEvent {
  batch: string;
  status: string;
  completed: number;
  failed: number;
  total: number;
}

export interface WaveDoneEvent {
  wave: number;
  completed: number;
  failed: number;
  skipped: number;
}

/** Why a run stopped before every task finished (the scheduling core's type). */
export type { StopReason };

export interface RunSummary {
  /** Tasks this run set out to run, and those added while it ran. */
  total: number;
  /** Tasks that started at least once in this run (a halt, a stop or a skip leaves the others). */
  ran: number;
  /** Attempts started in this run: a retried task counts each of its attempts. */
  attempts: number;
  /**
   * Tasks this run completed from the result cache, without executing them, and what their
   * results had cost (US dollars, as far as it was known): absent when none came from it.
   */
  cache?: { tasks: number; saved_usd: number };
  counts: Record<TaskStatus, number>;
  durationMs: number;
  /** Why the run stopped early, if it did. */
  stopped: StopReason | undefined;
  /** Human explanation for `stopped`. */
  reason: string;
  exitCode: number;
}

/**
 * The engine's typed events (bullmq WorkerListener style); the CLI and tests listen. Each
 * is emitted after the engine recorded the change it tells (the journal, attempts.ndjson,
 * the knowledge files: outcome-sink.ts), so no listener can lose or delay a result.
 */
export interface RunEvents {
  /**
   * `queue`: attempts wait in a queue for workers (--backend bullmq): a task:start is then
   * queued, until its task:running says a worker took it. Otherwise a started task runs.
   */
  'run:start': [{ session: string; total: number; waveCount: number; queue?: boolean }];
  'task:start': [TaskStartEvent];
  /** With --backend bullmq: a worker took a started attempt's job (it waited in the queue until now); at most once per attempt. */
  'task:running': [TaskRunningEvent];
  'task:retry': [TaskRetryEvent];
  'task:done': [TaskDoneEvent];
  'wave:start': [{ wave: number; tasks: number }];
  'wave:done': [WaveDoneEvent];
  /** An interactive task appended tasks or rewired pending ones (journaled before it is told). */
  'tasks:changed': [TasksChangedEvent];
  /** A person's save of tasks.csv was merged into the run: told after its changes were journaled and told as tasks:changed. */
  'tasks:edited': [TasksEditedEvent];
  'run:done': [RunSummary];
  /** Something a person should know that does not stop the run; also a listener of another event that threw. */
  warning: [string];
  /** With --backend bullmq: the number of worker processes listening to the session's queue, when it changes. */
  'workers:connected': [number];
  /** A poll of a batch (`--batch`) found it changed: its status and request counts. */
  'batch:progress': [BatchProgressEvent];
  /** A discussion gate decided what follows its round (analyze): told when it is taken, before its task's finish is recorded. */
  'gate:decided': [GateDecidedEvent];
  /** A rule injected a task (dynamic role injection): told once its row is journaled, before the task that fired the rule finishes. */
  'task:injected': [TaskInjectedEvent];
}

/** A task a rule injected: `[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP"`. */
export interface TaskInjectedEvent {
  id: string;
  /** `after PLAN-001`, `beside IMPL-*`. */
  placement: string;
  /** `keyword "OWASP"`. */
  reason: string;
}

/**
 * The run's events. A listener that throws, or whose promise rejects, is no failure of the
 * run: the other listeners still hear the event, and the error becomes a `warning`. A
 * listener of `warning` that throws is printed to stderr, once per emitter, and never
 * becomes a warning itself (that could loop).
 */
export class RunEmitter extends EventEmitter<RunEvents> {
  #warningListenerFailed = false;

  override emit<K extends keyof RunEvents>(event: K, ...args: RunEvents[K]): boolean {
    const listeners = this.rawListeners(event);
    emitToEach(listeners, this, args, (how, error) => this.#listenerFailed(event, how, error));
    return listeners.length > 0;
  }

  #listenerFailed(event: keyof RunEvents, how: ListenerFailure, error: unknown): void {
    const text = listenerFailureText(event, how, error);
    if (event !== 'warning') {
      this.emit('warning', `${text} (the run goes on; nothing is lost)`);
      return;
    }
    if (this.#warningListenerFailed) return;
    this.#warningListenerFailed = true;
    try {
      process.stderr.write(`csv-wave: ${text} (later errors of warning listeners are not shown)\n`);
    } catch {
      // No stderr to tell it on: the run goes on all the same.
    }
  }
}
