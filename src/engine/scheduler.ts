import { splitList } from '../csv/columns.js';
import type { TaskRow } from '../csv/tasks-file.js';
import { buildPrevContext } from '../graph/prev-context.js';
import type { ExecutorSpec, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { kRetryableClasses } from '../executors/types.js';
import type { RunEmitter, TaskDoneEvent } from './events.js';
import type { HaltPolicy } from './options.js';
import { ReadyQueue } from './ready-queue.js';
import { kDependencyFailedError, satisfiesDependents } from './task-state.js';

/** Runs a prepared request: on the worker pool, or in the interactive lane. */
export interface TaskRunner {
  runTask(request: WorkerRequest): Promise<WorkerReply>;
  runInteractive(request: WorkerRequest): Promise<WorkerReply>;
}

export interface SchedulerOptions {
  executor: ExecutorSpec;
  sessionDir: string;
  concurrency: number;
  schedule: 'waves' | 'eager';
  retries: number;
  retryBaseMs: number;
  timeoutMs: number;
  prevContextCap: number;
  halt: HaltPolicy | undefined;
}

export interface SchedulerHooks {
  /** Called with each finished task's reply before task:done (knowledge files, discoveries). */
  onFinished(row: TaskRow, reply: WorkerReply | undefined): void;
  /** Called when wave N is about to run (waves) or all its tasks have started (eager). */
  onWaveReady(wave: number): void;
}

/** One task of this run and where it stands. */
interface Entry {
  row: TaskRow;
  index: number;
  wave: number;
  rank: number;
  /** Dependencies and context sources of this run not finished yet. */
  remaining: number;
  /** Tasks of this run waiting on this one. */
  dependents: Entry[];
  /** A dependency failed or was skipped for a failure: this task will be skipped. */
  doomed: boolean;
  attempts: number;
  crashRetried: boolean;
  dispatched: boolean;
  finished: boolean;
  startedAt: number;
}

export type StopReason = 'halt' | 'stall' | 'edited' | 'signal';

const kMaxRetryDelayMs = 60_000;
const kPriorityRank: Record<string, number> = { P0: 0, P1: 1, '': 1, P2: 2 };

/**
 * Decides what runs when. Waves: a task may start once every task of the earlier waves has
 * finished. Eager: once its own dependencies (and context sources) have. Inside that,
 * P0 before P1 before P2, then file order. Failures skip their dependents transitively;
 * retryable failures are tried again after an exponential backoff with jitter.
 */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #events: RunEmitter;
  readonly #runner: TaskRunner;
  readonly #hooks: SchedulerHooks;
  readonly #byId: Map<string, TaskRow>;
  readonly #entries: Entry[] = [];
  readonly #ready = new ReadyQueue<Entry>();
  /** Interactive tasks ready to start: they go to the lane, outside the concurrency limit. */
  readonly #readyInteractive = new ReadyQueue<Entry>();
  readonly #held = new Map<number, Entry[]>();
  readonly #unfinishedByWave = new Map<number, number>();
  readonly #undispatchedByWave = new Map<number, number>();
  /** Waves with a task that started (not only skipped): the waves that get a wave file. */
  readonly #wavesThatRan = new Set<number>();
  readonly #waveOrder: number[];
  #currentWave = 0;
  #running = 0;
  #laneBusy = 0;
  #retryTimers = new Map<Entry, NodeJS.Timeout>();
  #unfinished = 0;
  #hardFailures = 0;
  #stopped: StopReason | undefined;
  #stopReason = '';
  #resolve: (() => void) | undefined;

  constructor(
    rows: readonly TaskRow[],
    waves: ReadonlyMap<string, number>,
    runIds: ReadonlySet<string>,
    options: SchedulerOptions,
    runner: TaskRunner,
    events: RunEmitter,
    hooks: SchedulerHooks,
  ) {
    this.#options = options;
    this.#runner = runner;
    this.#events = events;
    this.#hooks = hooks;
    this.#byId = new Map(rows.map((row) => [row.id, row]));
    const entryById = new Map<string, Entry>();
    rows.forEach((row, index) => {
      if (!runIds.has(row.id)) return;
      const wave = waves.get(row.id) ?? 1;
      const entry: Entry = {
        row,
        index,
        wave,
        rank: kPriorityRank[row.priority] ?? 1,
        remaining: 0,
        dependents: [],
        doomed: false,
        attempts: 0,
        crashRetried: false,
        dispatched: false,
        finished: false,
        startedAt: 0,
      };
      entryById.set(row.id, entry);
      this.#entries.push(entry);
      this.#unfinishedByWave.set(wave, (this.#unfinishedByWave.get(wave) ?? 0) + 1);
      this.#undispatchedByWave.set(wave, (this.#undispatchedByWave.get(wave) ?? 0) + 1);
    });
    this.#unfinished = this.#entries.length;
    this.#waveOrder = [...this.#unfinishedByWave.keys()].sort((a, b) => a - b);

    for (const entry of this.#entries) {
      const deps = new Set(splitList(entry.row.deps));
      // Context sources must be finished too, so that eager runs see the same prev_context.
      const prerequisites = new Set([...deps, ...splitList(entry.row.context_from)]);
      prerequisites.delete(entry.row.id);
      for (const id of prerequisites) {
        const upstream = entryById.get(id);
        if (upstream) {
          entry.remaining++;
          upstream.dependents.push(entry);
        } else if (deps.has(id)) {
          const row = this.#byId.get(id);
          if (row && !satisfiesDependents(row)) entry.doomed = true;
        }
      }
    }
  }

  /** Runs every task of the run; resolves when none is left that can start. */
  run(): Promise<{ stopped: StopReason | undefined; reason: string }> {
    return new Promise((resolve) => {
      this.#resolve = () => resolve({ stopped: this.#stopped, reason: this.#stopReason });
      this.#advanceWave();
      for (const entry of this.#entries) if (entry.remaining === 0 && !entry.finished) this.#becomeReady(entry);
      this.#pump();
    });
  }

  /** Stops starting tasks; running ones finish. */
  stop(reason: StopReason, explanation: string): void {
    if (this.#stopped) return;
    this.#stopped = reason;
    this.#stopReason = explanation;
    for (const [entry, timer] of this.#retryTimers) {
      clearTimeout(timer);
      entry.row.status = 'pending';
    }
    this.#retryTimers.clear();
    this.#checkDone();
  }

  #becomeReady(entry: Entry): void {
    if (entry.doomed) {
      this.#finish(entry, 'skipped', undefined, kDependencyFailedError);
      return;
    }
    if (this.#options.schedule === 'waves' && entry.wave > this.#currentWave) {
      const held = this.#held.get(entry.wave);
      if (held) held.push(entry);
      else this.#held.set(entry.wave, [entry]);
      return;
    }
    this.#queue(entry);
  }

  #queue(entry: Entry): void {
    if (entry.row.exec_mode === 'interactive') this.#readyInteractive.push(entry);
    else this.#ready.push(entry);
  }

  /** Moves the wave gate to the lowest wave with unfinished tasks and releases its tasks. */
  #advanceWave(): void {
    const next = this.#waveOrder.find((wave) => (this.#unfinishedByWave.get(wave) ?? 0) > 0);
    if (next === undefined || next === this.#currentWave) return;
    this.#currentWave = next;
    if (this.#options.schedule !== 'waves') return;
    this.#events.emit('wave:start', { wave: next, tasks: this.#unfinishedByWave.get(next) ?? 0 });
    this.#hooks.onWaveReady(next);
    for (const entry of this.#held.get(next) ?? []) this.#queue(entry);
    this.#held.delete(next);
  }

  #pump(): void {
    // The lane runs one task at a time; handing it the next only when it is free keeps
    // the rest pending, so that a halt or a stop holds them back like any other task.
    if (!this.#stopped && this.#readyInteractive.size > 0 && this.#laneBusy === 0) {
      this.#dispatch(this.#readyInteractive.pop()!, true);
    }
    while (!this.#stopped && this.#ready.size > 0 && this.#running < this.#options.concurrency) {
      this.#dispatch(this.#ready.pop()!, false);
    }
    this.#checkDone();
  }

  #dispatch(entry: Entry, interactive: boolean): void {
    entry.attempts++;
    if (!entry.dispatched) {
      entry.dispatched = true;
      entry.startedAt = performance.now();
      this.#countDispatched(entry.wave, true);
    }
    if (interactive) this.#laneBusy++;
    else this.#running++;
    entry.row.status = 'in_progress';
    this.#events.emit('task:start', { id: entry.row.id, wave: entry.wave, attempt: entry.attempts });
    const request = this.#request(entry);
    const run = interactive ? this.#runner.runInteractive(request) : this.#runner.runTask(request);
    run
      .catch((error: unknown): WorkerReply => ({
        kind: 'error',
        errorClass: 'task-failure',
        error: error instanceof Error ? error.message : String(error),
      }))
      .then((reply) => {
        if (interactive) this.#laneBusy--;
        else this.#running--;
        this.#settle(entry, reply);
        this.#pump();
      });
  }

  #countDispatched(wave: number, ran: boolean): void {
    if (ran) this.#wavesThatRan.add(wave);
    const left = (this.#undispatchedByWave.get(wave) ?? 1) - 1;
    this.#undispatchedByWave.set(wave, left);
    // A wave whose every task was skipped never runs, and under `waves` it gets no file
    // either: both schedules write the same wave files.
    if (left === 0 && this.#options.schedule === 'eager' && this.#wavesThatRan.has(wave)) this.#hooks.onWaveReady(wave);
  }

  #request(entry: Entry): WorkerRequest {
    const row = entry.row;
    const prevContext = buildPrevContext(splitList(row.context_from), (id) => this.#byId.get(id), this.#options.prevContextCap);
    const deps = splitList(row.deps).flatMap((id) => {
      const dep = this.#byId.get(id);
      return dep ? [{ id, status: dep.status, findings: dep.findings }] : [];
    });
    const cells: Record<string, string> = { ...row.extra };
    for (const [key, value] of Object.entries(row)) if (typeof value === 'string') cells[key] = value;
    return {
      executor: this.#options.executor,
      task: {
        id: row.id,
        wave: entry.wave,
        attempt: entry.attempts,
        session: this.#options.sessionDir,
        row: cells,
        prev_context: prevContext,
      },
      deps,
      timeoutMs: this.#options.timeoutMs,
      // After a worker died under it, the task runs alone: if it was the cause, it dies alone.
      ...(entry.crashRetried ? { isolated: true } : {}),
    };
  }

  #settle(entry: Entry, reply: WorkerReply): void {
    if (reply.kind === 'finished') {
      if (reply.status === 'failed') this.#hardFailures++;
      this.#finish(entry, reply.status, reply, reply.error);
      return;
    }
    const retryable = kRetryableClasses.has(reply.errorClass) && entry.attempts <= this.#options.retries;
    // A worker can die under a task that did nothing wrong (another task on its thread was
    // ended, or spent its memory): one more attempt on a fresh worker tells the two apart.
    const crashRetry = reply.errorClass === 'worker-crash' && !entry.crashRetried;
    if ((retryable || crashRetry) && !this.#stopped) {
      if (crashRetry) entry.crashRetried = true;
      const delayMs = crashRetry ? 0 : (reply.retryAfterMs ?? this.#backoff(entry.attempts));
      this.#events.emit('task:retry', {
        id: entry.row.id,
        attempt: entry.attempts,
        errorClass: reply.errorClass,
        error: reply.error,
        delayMs,
      });
      const timer = setTimeout(() => {
        this.#retryTimers.delete(entry);
        this.#queue(entry);
        this.#pump();
      }, delayMs);
      this.#retryTimers.set(entry, timer);
      return;
    }
    if (!kRetryableClasses.has(reply.errorClass)) this.#hardFailures++;
    this.#finish(entry, 'failed', reply, reply.error);
  }

  #backoff(attempt: number): number {
    const base = Math.min(kMaxRetryDelayMs, this.#options.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(base * (0.5 + Math.random()));
  }

  #finish(entry: Entry, status: TaskDoneEvent['status'], reply: WorkerReply | undefined, error: string): void {
    const row = entry.row;
    entry.finished = true;
    row.status = status;
    row.findings = reply?.kind === 'finished' ? reply.findings : '';
    row.gc_signal = reply?.kind === 'finished' ? reply.gc_signal : '';
    row.severity_summary = reply?.kind === 'finished' ? reply.severity_summary : '';
    row.error = error;
    this.#hooks.onFinished(row, reply);
    this.#events.emit('task:done', {
      id: row.id,
      wave: entry.wave,
      status,
      findings: row.findings,
      gc_signal: row.gc_signal,
      severity_summary: row.severity_summary,
      error: row.error,
      attempts: entry.attempts,
      durationMs: entry.dispatched ? performance.now() - entry.startedAt : 0,
    });
    this.#unfinished--;
    if (!entry.dispatched) this.#countDispatched(entry.wave, false);
    const left = this.#unfinishedByWave.get(entry.wave)! - 1;
    this.#unfinishedByWave.set(entry.wave, left);
    if (left === 0) this.#waveDone(entry.wave);

    const blocks = !satisfiesDependents(row);
    for (const dependent of entry.dependents) {
      if (blocks && splitList(dependent.row.deps).includes(row.id)) dependent.doomed = true;
      if (--dependent.remaining === 0) this.#becomeReady(dependent);
    }
    this.#checkHalt();
  }

  #waveDone(wave: number): void {
    let completed = 0;
    let failed = 0;
    let skipped = 0;
    for (const entry of this.#entries) {
      if (entry.wave !== wave) continue;
      if (entry.row.status === 'completed') completed++;
      else if (entry.row.status === 'failed') failed++;
      else if (entry.row.status === 'skipped') skipped++;
    }
    this.#events.emit('wave:done', { wave, completed, failed, skipped });
    if (wave === this.#currentWave) this.#advanceWave();
  }

  #checkHalt(): void {
    const halt = this.#options.halt;
    if (!halt || this.#stopped) return;
    const limit = 'count' in halt ? halt.count : Math.ceil((halt.percent / 100) * this.#entries.length);
    if (this.#hardFailures >= limit) {
      this.stop('halt', `Halted: ${this.#hardFailures} task(s) failed (limit ${'count' in halt ? halt.count : `${halt.percent}%`}); no new tasks were started`);
    }
  }

  #checkDone(): void {
    if (!this.#resolve || this.#running > 0 || this.#laneBusy > 0 || this.#retryTimers.size > 0) return;
    if (!this.#stopped && this.#ready.size + this.#readyInteractive.size > 0) return;
    if (!this.#stopped && this.#unfinished > 0) {
      this.#stopped = 'stall';
      this.#stopReason = this.#describeStall();
    }
    for (const entry of this.#entries) if (!entry.finished && entry.row.status === 'in_progress') entry.row.status = 'pending';
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve();
  }

  /** Which tasks wait, and on what: printed when nothing can start but tasks are left. */
  #describeStall(): string {
    const waiting = this.#entries.filter((entry) => !entry.finished);
    const lines = waiting.slice(0, 20).map((entry) => {
      const on = [...new Set([...splitList(entry.row.deps), ...splitList(entry.row.context_from)])].filter((id) => {
        const row = this.#byId.get(id);
        return row !== undefined && row.status !== 'completed' && row.status !== 'failed' && row.status !== 'skipped';
      });
      return `  ${entry.row.id} waits on ${on.length > 0 ? on.join(', ') : '(nothing it can name)'}`;
    });
    const more = waiting.length > 20 ? `\n  … and ${waiting.length - 20} more` : '';
    return `Stalled: nothing can start, yet ${waiting.length} task(s) are not finished:\n${lines.join('\n')}${more}`;
  }
}
