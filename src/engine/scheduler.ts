import { splitList } from '../csv/columns.js';
import { rowCells } from '../csv/tasks-table.js';
import type { TaskRow } from '../core/task.js';
import { buildDag } from '../graph/dag.js';
import { buildPrevContext } from '../graph/prev-context.js';
import { computeWaves } from '../graph/waves.js';
import type { ExecutorSpec, WorkerReply, WorkerRequest } from '../executors/messages.js';
import { cleanText } from '../executors/clean-text.js';
import { describe } from '../executors/module.js';
import { scrubSecrets } from '../executors/secret-scrubber.js';
import { kRetryableClasses } from '../executors/types.js';
import type { HandlerResult, SessionChanges } from '../interactive/types.js';
import { kTaskIdPattern } from '../schema/row.js';
import { dependencyFailedError, kBlockedPrefix, satisfiesDependents } from '../schema/task-state.js';
import type { AttemptDetail, RunEmitter, StopReason, TaskDoneEvent } from './events.js';
import type { HaltPolicy } from './options.js';
import { ReadyQueue } from './ready-queue.js';
import { fillWaveColumn } from './plan.js';

/** Runs a prepared request: on the worker pool, or in the interactive lane. */
export interface TaskRunner {
  runTask(request: WorkerRequest): Promise<WorkerReply>;
  /** An interactive task may also change the session (dynamic tasks, rewiring, skips). */
  runInteractive(request: WorkerRequest): Promise<HandlerResult>;
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
  /** The error this task will be skipped with: a dependency failed, or a checkpoint blocked. */
  doomed: string | undefined;
  /** In a ready queue now (it may have been rewired since; it is checked again when taken out). */
  queued: boolean;
  attempts: number;
  crashRetried: boolean;
  dispatched: boolean;
  finished: boolean;
  startedAt: number;
}

export type { StopReason };

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
  readonly #rows: TaskRow[];
  readonly #byId: Map<string, TaskRow>;
  readonly #entries: Entry[] = [];
  readonly #entryById = new Map<string, Entry>();
  /** Checkpoints that said block, with the error their downstream tasks are skipped with. */
  readonly #blockers = new Map<string, string>();
  readonly #ready = new ReadyQueue<Entry>();
  /** Interactive tasks ready to start: they go to the lane, outside the concurrency limit. */
  readonly #readyInteractive = new ReadyQueue<Entry>();
  readonly #held = new Map<number, Entry[]>();
  readonly #unfinishedByWave = new Map<number, number>();
  readonly #undispatchedByWave = new Map<number, number>();
  /** Waves with a task that started (not only skipped): the waves that get a wave file. */
  readonly #wavesThatRan = new Set<number>();
  #waveOrder: number[] = [];
  /** Tasks of this run in each wave, finished or not, and every such wave in order: for the wave lines. */
  readonly #sizeByWave = new Map<number, number>();
  #allWaves: number[] = [];
  /** Index in #allWaves of the first wave not reported done yet. */
  #nextWaveToReport = 0;
  #lastWaveStarted = 0;
  #lastWaveDone = 0;
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
    rows: TaskRow[],
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
    this.#rows = rows;
    this.#byId = new Map(rows.map((row) => [row.id, row]));
    rows.forEach((row, index) => {
      if (runIds.has(row.id)) this.#addEntry(row, index, waves.get(row.id) ?? 1);
    });
    this.#unfinished = this.#entries.length;
    this.#rewire();
  }

  #addEntry(row: TaskRow, index: number, wave: number): Entry {
    const entry: Entry = {
      row,
      index,
      wave,
      rank: kPriorityRank[row.priority] ?? 1,
      remaining: 0,
      dependents: [],
      doomed: undefined,
      queued: false,
      attempts: 0,
      crashRetried: false,
      dispatched: false,
      finished: false,
      startedAt: 0,
    };
    this.#entries.push(entry);
    this.#entryById.set(row.id, entry);
    return entry;
  }

  /**
   * Derives the waiting structure from the rows: what each unfinished task still waits
   * on, who waits on it, which are doomed, and the per-wave counts. Run at the start and
   * again whenever an interactive task changes the session.
   */
  #rewire(): void {
    this.#unfinishedByWave.clear();
    this.#undispatchedByWave.clear();
    for (const entry of this.#entries) entry.dependents = [];
    for (const entry of this.#entries) {
      if (entry.finished) continue;
      this.#unfinishedByWave.set(entry.wave, (this.#unfinishedByWave.get(entry.wave) ?? 0) + 1);
      if (!entry.dispatched) this.#undispatchedByWave.set(entry.wave, (this.#undispatchedByWave.get(entry.wave) ?? 0) + 1);
      entry.remaining = 0;
      const deps = new Set(splitList(entry.row.deps));
      // Context sources must be finished too, so that eager runs see the same prev_context.
      const prerequisites = new Set([...deps, ...splitList(entry.row.context_from)]);
      prerequisites.delete(entry.row.id);
      for (const id of prerequisites) {
        const upstream = this.#entryById.get(id);
        if (upstream && !upstream.finished) {
          entry.remaining++;
          upstream.dependents.push(entry);
        } else if (deps.has(id)) {
          const row = this.#byId.get(id);
          const doom = row ? this.#doomFrom(row) : undefined;
          if (doom) entry.doomed ??= doom;
        }
      }
    }
    this.#waveOrder = [...this.#unfinishedByWave.keys()].sort((a, b) => a - b);
    this.#sizeByWave.clear();
    for (const entry of this.#entries) this.#sizeByWave.set(entry.wave, (this.#sizeByWave.get(entry.wave) ?? 0) + 1);
    this.#allWaves = [...this.#sizeByWave.keys()].sort((a, b) => a - b);
    const next = this.#allWaves.findIndex((wave) => wave > this.#lastWaveDone);
    this.#nextWaveToReport = next === -1 ? this.#allWaves.length : next;
  }

  /** The error a dependent of this finished task is skipped with, or undefined if it may run. */
  #doomFrom(row: TaskRow): string | undefined {
    const blocked = this.#blockers.get(row.id);
    if (blocked) return blocked;
    if (row.status === 'skipped' && row.error.startsWith(kBlockedPrefix)) return row.error;
    return satisfiesDependents(row) ? undefined : dependencyFailedError(row);
  }

  /** Runs every task of the run; resolves when none is left that can start. */
  run(): Promise<{ stopped: StopReason | undefined; reason: string }> {
    return new Promise((resolve) => {
      this.#resolve = () => resolve({ stopped: this.#stopped, reason: this.#stopReason });
      this.#advanceWave();
      this.#readyAll();
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

  /** Every task that waits on nothing and is not queued yet becomes ready. */
  #readyAll(): void {
    for (const entry of this.#entries) {
      if (entry.remaining === 0 && !entry.finished && !entry.dispatched && !entry.queued) this.#becomeReady(entry);
    }
  }

  #becomeReady(entry: Entry): void {
    if (entry.finished) return;
    if (entry.doomed) {
      this.#finish(entry, 'skipped', undefined, entry.doomed);
      return;
    }
    if (this.#options.schedule === 'waves' && entry.wave > this.#currentWave) {
      entry.queued = true;
      const held = this.#held.get(entry.wave);
      if (held) held.push(entry);
      else this.#held.set(entry.wave, [entry]);
      return;
    }
    this.#queue(entry);
  }

  #queue(entry: Entry): void {
    entry.queued = true;
    if (entry.row.exec_mode === 'interactive') this.#readyInteractive.push(entry);
    else this.#ready.push(entry);
  }

  /** The next queued task that may still start (a rewiring can make a queued task wait again). */
  #take(queue: ReadyQueue<Entry>): Entry | undefined {
    for (let entry = queue.pop(); entry; entry = queue.pop()) {
      entry.queued = false;
      if (!entry.finished && entry.remaining === 0) return entry;
    }
    return undefined;
  }

  /** Moves the wave gate to the lowest wave with unfinished tasks and releases its tasks. */
  #advanceWave(): void {
    const next = this.#waveOrder.find((wave) => (this.#unfinishedByWave.get(wave) ?? 0) > 0);
    if (next === undefined || next === this.#currentWave) return;
    this.#currentWave = next;
    if (this.#options.schedule !== 'waves') return;
    this.#reportWaves();
    this.#hooks.onWaveReady(next);
    for (const entry of this.#held.get(next) ?? []) this.#queue(entry);
    this.#held.delete(next);
  }

  #pump(): void {
    // The lane runs one task at a time; handing it the next only when it is free keeps
    // the rest pending, so that a halt or a stop holds them back like any other task.
    if (!this.#stopped && this.#readyInteractive.size > 0 && this.#laneBusy === 0) {
      const entry = this.#take(this.#readyInteractive);
      if (entry) this.#dispatch(entry, true);
    }
    while (!this.#stopped && this.#ready.size > 0 && this.#running < this.#options.concurrency) {
      const entry = this.#take(this.#ready);
      if (entry) this.#dispatch(entry, false);
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
    const run: Promise<HandlerResult> = interactive
      ? this.#runner.runInteractive(request)
      : this.#runner.runTask(request).then((reply) => ({ reply }));
    run
      .catch((error: unknown): HandlerResult => ({
        // An interactive handler that threw: its message is task output like any other.
        reply: { kind: 'error', errorClass: 'task-failure', error: scrubSecrets(cleanText(describe(error))) },
      }))
      .then(({ reply, changes }) => {
        if (interactive) this.#laneBusy--;
        else this.#running--;
        const apply = changes && reply.kind === 'finished' && reply.status === 'completed';
        const problem = apply ? this.#applyChanges(changes) : undefined;
        // A task to skip is marked before the deciding task finishes, so that it is skipped
        // with its own reason as soon as it would become ready; the rest right after.
        if (apply && !problem) for (const { id, error } of changes.skip) this.#entryById.get(id)!.doomed ??= error;
        this.#settle(entry, problem ? { kind: 'error', errorClass: 'task-failure', error: problem } : reply);
        if (apply && !problem) for (const { id, error } of changes.skip) this.#skip(id, error);
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
    return {
      executor: this.#options.executor,
      task: {
        id: row.id,
        wave: entry.wave,
        attempt: entry.attempts,
        session: this.#options.sessionDir,
        row: rowCells(row),
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
    if (reply.errorClass === 'io') {
      // The session folder failed the task, not the task itself: it is no failure (no
      // dependent skipped), it stays pending for `resume`, and nothing new starts.
      entry.row.status = 'pending';
      this.stop('io', `Stopped: ${entry.row.id} could not write its files into the session folder (${reply.error})`);
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
        ...attemptDetail(reply),
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
    if (reply?.kind === 'finished' && reply.supervision_verdict === 'block') {
      const why = reply.findings.replace(/\s+/g, ' ').trim().slice(0, 120);
      this.#blockers.set(row.id, `${kBlockedPrefix} ${row.id}${why === '' ? '' : `: ${why}`}`);
    }
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
      ...(reply?.kind === 'error' ? { errorClass: reply.errorClass } : status === 'failed' && reply ? { errorClass: 'task-failure' as const } : {}),
      ...(reply ? attemptDetail(reply) : {}),
    });
    this.#unfinished--;
    if (!entry.dispatched) this.#countDispatched(entry.wave, false);
    // Dependents first: the ones this dooms are skipped before the wave gate moves on, so
    // that a later wave whose every task is skipped is passed over (no wave file), as in eager.
    const doom = this.#doomFrom(row);
    for (const dependent of entry.dependents) {
      if (doom && splitList(dependent.row.deps).includes(row.id)) dependent.doomed ??= doom;
      if (--dependent.remaining === 0) this.#becomeReady(dependent);
    }
    const left = this.#unfinishedByWave.get(entry.wave)! - 1;
    this.#unfinishedByWave.set(entry.wave, left);
    if (left === 0 && entry.wave === this.#currentWave) this.#advanceWave();
    this.#reportWaves();
    this.#checkHalt();
  }

  /**
   * Applies what an interactive task added and rewired (DESIGN.md section 4: new rows
   * appended, waves recomputed), before the task itself is finished; its skips come after.
   * Returns why the change was refused, leaving the session as it was, or undefined.
   */
  #applyChanges(changes: SessionChanges): string | undefined {
    const problem = this.#checkChanges(changes);
    if (problem) return `Invalid session change: ${problem}`;
    for (const row of changes.add) {
      this.#rows.push(row);
      this.#byId.set(row.id, row);
    }
    for (const update of changes.update) {
      const row = this.#byId.get(update.id)!;
      if (update.deps !== undefined) row.deps = update.deps;
      if (update.context_from !== undefined) row.context_from = update.context_from;
    }
    const { waves, waveCount } = computeWaves(buildDag(this.#rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))));
    fillWaveColumn(this.#rows, waves);
    for (const entry of this.#entries) entry.wave = waves.get(entry.row.id)!;
    for (const row of changes.add) this.#addEntry(row, this.#rows.length - 1, waves.get(row.id)!);
    this.#unfinished += changes.add.length;
    if (changes.add.length + changes.update.length > 0) {
      this.#events.emit('tasks:changed', { added: changes.add, updated: changes.update, waveCount });
    }
    this.#rewire();
    for (const held of this.#held.values()) for (const entry of held) entry.queued = false;
    this.#held.clear();
    this.#readyAll();
    return undefined;
  }

  #skip(id: string, error: string): void {
    const entry = this.#entryById.get(id)!;
    if (!entry.finished) this.#finish(entry, 'skipped', undefined, error);
  }

  /** Why a change cannot be applied: an id taken or malformed, a task already started, a cycle. */
  #checkChanges(changes: SessionChanges): string | undefined {
    const ids = new Set(this.#byId.keys());
    for (const row of changes.add) {
      if (!kTaskIdPattern.test(row.id)) return `invalid task id ${row.id}`;
      if (ids.has(row.id)) return `task ${row.id} exists already`;
      ids.add(row.id);
    }
    const notStarted = (id: string) => {
      const entry = this.#entryById.get(id);
      return entry !== undefined && !entry.dispatched && !entry.finished;
    };
    for (const { id } of [...changes.update, ...changes.skip]) {
      if (!notStarted(id)) return `task ${id} is not a pending task of this run`;
    }
    const updated = new Map(changes.update.map((update) => [update.id, update]));
    const rows = [...this.#rows, ...changes.add];
    for (const row of rows) {
      for (const dep of splitList(updated.get(row.id)?.deps ?? row.deps)) {
        if (!ids.has(dep)) return `task ${row.id} depends on unknown task ${dep}`;
      }
    }
    const graph = buildDag(rows.map((row) => ({ id: row.id, deps: splitList(updated.get(row.id)?.deps ?? row.deps) })));
    const { cycles } = computeWaves(graph);
    return cycles.length > 0 ? `it would make a cycle of ${cycles[0]!.join(';')}` : undefined;
  }

  /**
   * Emits the wave lines in wave order, whatever order tasks finish in: wave N is done once
   * it and every wave before it have no unfinished task, so a later wave whose tasks were
   * all skipped early (a failure, a GC round that converged) waits for the waves before it.
   * Under `waves` each wave is started first: when the gate reaches it, or when it is
   * passed over because nothing of it is left to run.
   */
  #reportWaves(): void {
    for (let wave = this.#allWaves[this.#nextWaveToReport]; wave !== undefined; wave = this.#allWaves[this.#nextWaveToReport]) {
      const unfinished = this.#unfinishedByWave.get(wave) ?? 0;
      if (unfinished > 0 && wave > this.#currentWave) return;
      if (this.#options.schedule === 'waves' && wave > this.#lastWaveStarted) {
        this.#lastWaveStarted = wave;
        this.#events.emit('wave:start', { wave, tasks: this.#sizeByWave.get(wave) ?? 0 });
      }
      if (unfinished > 0) return;
      this.#lastWaveDone = wave;
      this.#nextWaveToReport++;
      this.#waveDone(wave);
    }
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

/** The thread and tokens of an attempt, for the attempts log (absent fields left out). */
function attemptDetail(reply: WorkerReply): AttemptDetail {
  return {
    ...(reply.thread === undefined ? {} : { thread: reply.thread }),
    ...(reply.usage === undefined ? {} : { usage: reply.usage }),
  };
}
