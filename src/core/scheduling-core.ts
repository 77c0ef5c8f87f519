import { splitList } from './id-list.js';
import { checkChanges } from './session-changes.js';
import type { FinalStatus, TaskRow } from './task.js';
import type { CoreOptions } from './core-options.js';
import type { CoreReply, Effect, RefusedChange } from './effects.js';
import { doom, type Entry } from './state/entry.js';
import { ReadyQueue } from './state/ready-queue.js';
import { haltReason, judgeError } from './state/retry-policy.js';
import { recordOutcome } from './state/record-outcome.js';
import { RunGraph } from './state/run-graph.js';
import type { ChangeRules, SessionEdit, TaskChanges, TaskStanding } from './session-changes.js';
import { blockedCause, causeForDependents, parseSkipCause, type SkipCause } from './skip-cause.js';
import type { GateState } from './gates.js';
import { branchCell, routeCause, routeProblem, type BranchOf } from './routing.js';
import { describeStall } from './state/stall.js';
import type { StopReason } from './stop-reason.js';
import { WaveBook } from './state/wave-book.js';

/**
 * The scheduling rules, with no clock, timer or randomness of their own: each event
 * (start, settled, retryDue, stop, takeBack) returns the effects to perform, in order, as a
 * generator, so that an event fed back while an effect is performed (a listener that stops
 * the run) is seen by the effects after it. Waves: a task may start once every task of the
 * earlier waves has finished. Eager: once its own dependencies (and context sources) have.
 * Inside that, P0 before P1 before P2, then file order. Failures skip their dependents
 * transitively; retryable failures are tried again after an exponential backoff with jitter.
 * A routing task's dependents on other branches are skipped as not chosen (routing.ts); a
 * task whose dependency's artifacts wait for validation is held at their gate (gates.ts).
 */
export class SchedulingCore<R extends CoreReply = CoreReply> {
  readonly #options: CoreOptions;
  readonly #graph: RunGraph;
  /** The graph's own members, named once. */
  readonly #byId: Map<string, TaskRow>;
  readonly #entries: Entry[];
  readonly #entryById: Map<string, Entry>;
  /** Checkpoints of this run that said block, with the cause their downstream tasks are skipped with. */
  readonly #blockers = new Map<string, SkipCause>();
  readonly #ready = new ReadyQueue<Entry>();
  /** Interactive tasks ready to start: they go to the lane, outside the concurrency limit. */
  readonly #readyInteractive = new ReadyQueue<Entry>();
  readonly #waves: WaveBook;
  /** The artifact gates that are closed (pending or failed), by the task that made the artifacts. */
  readonly #closedGates = new Map<string, Exclude<GateState, 'passed'>>();
  readonly #branchOf: BranchOf;
  readonly #validates: (row: TaskRow) => boolean;
  #running = 0;
  #laneBusy = 0;
  #retrying = 0;
  #unfinished = 0;
  #hardFailures = 0;
  #phase: 'idle' | 'running' | 'over' = 'idle';
  /** True while the driver is told it may feed an edit (`edit-point`): an edit then only rewires, the caller goes on. */
  #atEditPoint = false;
  #stopped: StopReason | undefined;
  #stopReason = '';

  /** `rows` is the session's table: dynamic tasks are appended to it, and results written into it. */
  constructor(rows: TaskRow[], waves: ReadonlyMap<string, number>, runIds: ReadonlySet<string>, options: CoreOptions) {
    this.#options = options;
    this.#graph = new RunGraph(rows, waves, runIds);
    this.#byId = this.#graph.byId;
    this.#entries = this.#graph.entries;
    this.#entryById = this.#graph.entryById;
    this.#waves = new WaveBook(options.schedule, this.#entries);
    this.#unfinished = this.#entries.length;
    this.#branchOf = options.branchOf ?? branchCell;
    this.#validates = options.validates ?? (() => false);
    for (const [id, gate] of options.gates ?? []) this.#setGate(id, gate);
    this.#rewire();
  }

  #setGate(id: string, gate: GateState): void {
    if (gate === 'passed') this.#closedGates.delete(id);
    else this.#closedGates.set(id, gate);
  }

  /**
   * The dependencies whose artifacts hold this task at their gate: none for a validator,
   * whose work is to end the wait. Cheap when no gate is closed (most runs).
   */
  #closedGatesOf(row: TaskRow): string[] {
    if (this.#closedGates.size === 0 || this.#validates(row)) return [];
    return splitList(row.deps).filter((id) => this.#closedGates.has(id));
  }

  /** A row of the session (the tasks of this run and the rest), by id. */
  rowById(id: string): TaskRow | undefined {
    return this.#byId.get(id);
  }

  /**
   * Where a task stands for an edit of tasks.csv; undefined for an id the session does not
   * have. A task of a wave that is running (schedule `waves`) keeps its inputs even before
   * it starts: its wave file was written with them. A stopped run starts nothing more, so
   * every task that did not start is open then.
   */
  standing(id: string): TaskStanding | undefined {
    if (!this.#byId.has(id)) return undefined;
    const entry = this.#entryById.get(id);
    if (entry === undefined) return 'earlier';
    if (entry.state === 'done') return 'finished';
    if (entry.attempts > 0) return 'running';
    const gated = this.#options.schedule === 'waves' && this.#phase === 'running' && !this.#stopped;
    return gated && entry.wave <= this.#waves.current ? 'wave-running' : 'open';
  }

  /** Why an edit of tasks.csv cannot be applied as it stands (see `edit`), or undefined. */
  checkEdit(edit: SessionEdit): string | undefined {
    return checkChanges(this.#graph.rows, edit, this.#editRules());
  }

  /**
   * A person's edit of tasks.csv, merged and validated by the session (session/edits/):
   * applied like an interactive task's changes (new rows, rewiring, waves recomputed),
   * where it touches only tasks that are not running, and removes only tasks that are open.
   * A task it adds or moves goes no earlier than the wave after the one running, so that
   * under `waves` it applies from the next wave. Refused whole (nothing changes) when
   * `checkEdit` finds a problem: the driver asks first.
   */
  *edit(edit: SessionEdit): Generator<Effect<R | RefusedChange>> {
    const applied = this.#graph.apply(edit, this.#editRules(), this.#waves.current + 1);
    if ('problem' in applied) return;
    this.#unfinished += edit.add.length - applied.removed;
    yield {
      type: 'tasks-changed',
      by: 'edit',
      added: edit.add,
      updated: edit.update,
      removed: edit.remove,
      previous: [],
      waveCount: applied.waveCount,
    };
    this.#rewire();
    this.#waves.dropHeld();
    if (this.#phase !== 'running') return;
    yield* this.#readyAll();
    if (!this.#atEditPoint) yield* this.#pump();
  }

  #editRules(): ChangeRules {
    const standing = (id: string) => this.standing(id);
    return {
      change: (id) => {
        const where = standing(id);
        return where === 'open' || where === 'finished' || where === 'earlier';
      },
      skip: () => false,
      remove: (id) => standing(id) === 'open',
      refusal: 'is running, or is not in the session',
    };
  }

  /**
   * Derives the waiting structure from the rows: what each unfinished task still waits on,
   * who waits on it, which are to be skipped, and the per-wave counts. Run at the start and
   * again whenever an interactive task changes the session.
   */
  #rewire(): void {
    this.#graph.rewire((row, dependent) => this.#causeFrom(row) ?? routeCause(row, dependent, this.#branchOf));
    this.#waves.recount();
  }

  /** The cause every dependent of this finished task is skipped with, or undefined if they may run (routing aside). */
  #causeFrom(row: TaskRow): SkipCause | undefined {
    return this.#blockers.get(row.id) ?? causeForDependents(row);
  }

  /** The run begins: the first wave opens and every task that waits on nothing is queued. */
  *start(): Generator<Effect<R | RefusedChange>> {
    if (this.#phase !== 'idle') return;
    this.#phase = 'running';
    yield* this.#advanceWave();
    yield* this.#readyAll();
    yield* this.#pump();
  }

  /** Stops starting tasks (planned retries included); running ones finish. The first reason given is kept. */
  *stop(reason: StopReason, explanation: string): Generator<Effect<R | RefusedChange>> {
    if (this.#stopped) return;
    this.#stopped = reason;
    this.#stopReason = explanation;
    for (const entry of this.#entries) {
      if (entry.state !== 'retry-wait') continue;
      entry.state = 'waiting';
      entry.row.status = 'pending';
      this.#retrying--;
      yield { type: 'cancel-retry', id: entry.row.id };
    }
    const done = this.#checkDone();
    if (done) yield done;
  }

  /** An attempt came back; an interactive task may also change the session. */
  *settled(id: string, reply: R, changes?: TaskChanges): Generator<Effect<R | RefusedChange>> {
    const entry = this.#entryById.get(id);
    if (entry?.state !== 'running') return;
    this.#release(entry);
    const completed = reply.kind === 'finished' && reply.status === 'completed';
    const route = completed ? (reply.route ?? '') : '';
    let problem = route === '' ? undefined : routeProblem(id, route, this.#graph.rows, this.#branchOf);
    const apply = problem === undefined && changes !== undefined && completed;
    if (apply) problem = yield* this.#applyChanges(changes);
    const skips = apply && problem === undefined ? changes.skip.map(({ id, error }) => ({ id, cause: parseSkipCause(error) })) : [];
    // A task to skip is marked before the deciding task finishes, so that it is skipped
    // with its own reason as soon as it would become ready; the rest right after.
    for (const skip of skips) {
      const skipped = this.#entryById.get(skip.id)!;
      if (!skipped.pendingSkip) doom(skipped, skip.cause, -1);
    }
    yield* this.#settle(entry, problem === undefined ? reply : { kind: 'error', errorClass: 'task-failure', error: problem }, apply && problem === undefined ? changes.skip : []);
    for (const skip of skips) {
      // An edit of tasks.csv fed at an edit point meanwhile may have removed it.
      const skipped = this.#entryById.get(skip.id);
      if (skipped !== undefined && skipped.state !== 'done') yield* this.#finish(skipped, 'skipped', undefined, skip.cause.error);
    }
    yield* this.#pump();
  }

  /**
   * The driver took a running task back (after a stop): pending again, no longer out, its
   * late answer ignored, not started again; the run is over once nothing else is out.
   */
  *takeBack(id: string): Generator<Effect<R | RefusedChange>> {
    const entry = this.#entryById.get(id);
    if (entry?.state !== 'running') return;
    this.#release(entry);
    entry.state = 'waiting';
    entry.row.status = 'pending';
    yield* this.#pump();
  }

  /** A running task's slot (or the lane) is free again. */
  #release(entry: Entry): void {
    if (entry.row.exec_mode === 'interactive') this.#laneBusy--;
    else this.#running--;
  }

  /** The delay of a planned retry is over. */
  *retryDue(id: string): Generator<Effect<R | RefusedChange>> {
    const entry = this.#entryById.get(id);
    if (entry?.state !== 'retry-wait') return;
    this.#retrying--;
    this.#queue(entry);
    yield* this.#pump();
  }

  /** Every task that waits on nothing and never started becomes ready. */
  *#readyAll(): Generator<Effect<R | RefusedChange>> {
    for (const entry of this.#entries) {
      if (entry.state === 'waiting' && entry.remaining === 0 && entry.attempts === 0) yield* this.#becomeReady(entry);
    }
  }

  /** A task that waits on nothing now: skipped if it is doomed, else held at an artifact gate or the wave gate, or queued. */
  *#becomeReady(entry: Entry): Generator<Effect<R | RefusedChange>> {
    if (entry.state === 'done') return;
    if (entry.pendingSkip) yield* this.#finish(entry, 'skipped', undefined, entry.pendingSkip.error);
    else this.#admit(entry);
  }

  #admit(entry: Entry): void {
    if (this.#closedGatesOf(entry.row).length > 0) entry.state = 'gated';
    else if (!this.#waves.hold(entry)) this.#queue(entry);
  }

  #queue(entry: Entry): void {
    entry.state = 'ready';
    if (entry.row.exec_mode === 'interactive') this.#readyInteractive.push(entry);
    else this.#ready.push(entry);
  }

  /**
   * The next queued task that may still start (a change can make a queued task wait again,
   * skip it, remove it, or move it to the other queue by its exec_mode).
   */
  #take(queue: ReadyQueue<Entry>): Entry | undefined {
    const interactive = queue === this.#readyInteractive;
    for (let entry = queue.pop(); entry; entry = queue.pop()) {
      if (entry.state === 'ready' && entry.remaining === 0 && (entry.row.exec_mode === 'interactive') === interactive) return entry;
    }
    return undefined;
  }

  /**
   * Moves the wave gate to the lowest wave with unfinished tasks and releases its tasks.
   * Under `waves`, an edit of tasks.csv may come in first (an edit point), so that it
   * applies from the wave about to open.
   */
  *#advanceWave(editPoint = true): Generator<Effect<R | RefusedChange>> {
    if (editPoint && this.#options.schedule === 'waves' && this.#waves.current > 0 && !this.#stopped) {
      yield* this.#editPoint();
      if (this.#stopped) return;
    }
    const next = this.#waves.nextOpen();
    if (next === undefined) return;
    if (this.#options.schedule !== 'waves') return;
    yield* this.#waves.report();
    yield { type: 'wave-file', wave: next };
    for (const entry of this.#waves.release(next)) this.#queue(entry);
  }

  *#pump(): Generator<Effect<R | RefusedChange>> {
    // The lane runs one task at a time; handing it the next only when it is free keeps
    // the rest pending, so that a halt or a stop holds them back like any other task.
    if (!this.#stopped && this.#readyInteractive.size > 0 && this.#laneBusy === 0) {
      const entry = this.#take(this.#readyInteractive);
      const waveFile = entry && this.#startAttempt(entry);
      if (waveFile) yield waveFile;
      if (entry) yield this.#handOut(entry, true);
    }
    while (!this.#stopped && this.#ready.size > 0 && this.#running < this.#options.concurrency) {
      const entry = this.#take(this.#ready);
      if (!entry) continue;
      const waveFile = this.#startAttempt(entry);
      if (waveFile) yield waveFile;
      yield this.#handOut(entry, false);
    }
    // Nothing out and nothing to start: the run would end here. An edit of tasks.csv may
    // still come in first, with tasks to run.
    if (!this.#stopped && this.#phase === 'running' && this.#idle()) {
      yield* this.#editPoint();
      if (!this.#stopped && this.#phase === 'running') {
        if (this.#options.schedule === 'waves' && this.#waves.currentDone()) yield* this.#advanceWave(false);
        if (this.#ready.size + this.#readyInteractive.size > 0) {
          yield* this.#pump();
          return;
        }
      }
    }
    const done = this.#checkDone();
    if (done) yield done;
  }

  /** Tells the driver it may feed an edit now (`edit`), which then only rewires: the caller goes on from there. */
  *#editPoint(): Generator<Effect<R | RefusedChange>> {
    this.#atEditPoint = true;
    try {
      yield { type: 'edit-point' };
    } finally {
      this.#atEditPoint = false;
    }
  }

  /** Nothing out, nothing waiting for a retry, nothing queued. */
  #idle(): boolean {
    return this.#running === 0 && this.#laneBusy === 0 && this.#retrying === 0 && this.#ready.size + this.#readyInteractive.size === 0;
  }

  /** Starts an attempt; returns the wave file it completes (eager), owed before the dispatch itself. */
  #startAttempt(entry: Entry): Effect<R | RefusedChange> | undefined {
    entry.attempts++;
    entry.state = 'running';
    return entry.attempts === 1 ? this.#waves.dispatched(entry.wave, true) : undefined;
  }

  #handOut(entry: Entry, interactive: boolean): Effect<R | RefusedChange> {
    if (interactive) this.#laneBusy++;
    else this.#running++;
    entry.row.status = 'in_progress';
    // After a worker died under it, the task runs alone: if it was the cause, it dies alone.
    return { type: 'dispatch', row: entry.row, wave: entry.wave, attempt: entry.attempts, interactive, isolated: entry.crashRetried };
  }

  *#settle(entry: Entry, reply: R | RefusedChange, skips: readonly { id: string; error: string }[] = []): Generator<Effect<R | RefusedChange>> {
    if (reply.kind === 'finished') {
      if (reply.status === 'failed') this.#hardFailures++;
      yield* this.#finish(entry, reply.status, reply, reply.error, skips);
      return;
    }
    if (reply.errorClass === 'io') {
      // The session folder failed the task, not the task itself: it is no failure (no
      // dependent skipped), it stays pending for `resume`, and nothing new starts.
      entry.state = 'waiting';
      entry.row.status = 'pending';
      yield* this.stop('io', `Stopped: ${entry.row.id} could not write its files into the session folder (${reply.error})`);
      return;
    }
    const verdict = judgeError(reply, entry.attempts, entry.crashRetried, this.#options);
    if (verdict.retry && !this.#stopped) {
      entry.crashRetried ||= verdict.crash;
      entry.state = 'retry-wait';
      this.#retrying++;
      yield { type: 'retry', id: entry.row.id, attempt: entry.attempts, reply, delayMs: verdict.delayMs };
      return;
    }
    if (verdict.countsForHalt) this.#hardFailures++;
    yield* this.#finish(entry, 'failed', reply, reply.error);
  }

  *#finish(
    entry: Entry,
    status: FinalStatus,
    reply: R | RefusedChange | undefined,
    error: string,
    skips: readonly { id: string; error: string }[] = [],
  ): Generator<Effect<R | RefusedChange>> {
    const row = entry.row;
    entry.state = 'done';
    if (reply?.kind === 'finished' && reply.supervision_verdict === 'block') this.#blockers.set(row.id, blockedCause(row.id, reply.findings));
    recordOutcome(row, status, reply, error);
    yield { type: 'finished', row, wave: entry.wave, status, reply, attempts: entry.attempts, ...(skips.length > 0 ? { skips } : {}) };
    this.#unfinished--;
    const waveFile = entry.attempts === 0 ? this.#waves.dispatched(entry.wave, false) : undefined;
    if (waveFile) yield waveFile;
    // Dependents first: the ones this dooms are skipped before the wave gate moves on, so
    // that a later wave whose every task is skipped is passed over (no wave file), as in eager.
    const cause = this.#causeFrom(row);
    const routed = row.route !== '';
    for (const dependent of entry.dependents) {
      const own = cause ?? (routed ? routeCause(row, dependent.row, this.#branchOf) : undefined);
      const rank = own ? splitList(dependent.row.deps).indexOf(row.id) : -1;
      if (own && rank !== -1) doom(dependent, own, rank);
      if (--dependent.remaining !== 0 || dependent.state === 'done') continue;
      // Most tasks are not doomed: admitted without a generator, the hot path of big runs.
      if (dependent.pendingSkip) yield* this.#becomeReady(dependent);
      else this.#admit(dependent);
    }
    if (this.#waves.finished(entry.wave)) yield* this.#advanceWave();
    yield* this.#waves.report();
    if (this.#stopped) return;
    const halt = haltReason(this.#options.halt, this.#hardFailures, this.#entries.length);
    if (halt) yield* this.stop('halt', halt);
  }

  /**
   * Applies what an interactive task added and rewired (DESIGN.md section 4: new rows
   * appended, waves recomputed), before the task itself is finished; its skips come after.
   * Returns why the change was refused, leaving the session as it was, or undefined.
   */
  *#applyChanges(changes: TaskChanges): Generator<Effect<R | RefusedChange>, string | undefined> {
    const previous = changes.update.flatMap(({ id }) => {
      const row = this.#byId.get(id);
      return row === undefined ? [] : [{ id, deps: row.deps, context_from: row.context_from }];
    });
    const pendingInRun = (id: string) => {
      const entry = this.#entryById.get(id);
      return entry !== undefined && entry.attempts === 0 && entry.state !== 'done';
    };
    const rules: ChangeRules = { change: pendingInRun, skip: pendingInRun, remove: () => false, refusal: 'is not a pending task of this run' };
    const applied = this.#graph.apply(changes, rules);
    if ('problem' in applied) return applied.problem;
    for (const { id, gate } of changes.gates ?? []) this.#setGate(id, gate);
    this.#unfinished += changes.add.length;
    if (changes.add.length + changes.update.length > 0) {
      yield {
        type: 'tasks-changed',
        by: 'task',
        added: changes.add,
        updated: changes.update,
        removed: [],
        previous,
        waveCount: applied.waveCount,
      };
    }
    this.#rewire();
    this.#waves.dropHeld();
    yield* this.#readyAll();
    return undefined;
  }

  /** The run-done effect once nothing is out and nothing more can start (plain, not a generator: it runs after every event). */
  #checkDone(): Effect<R | RefusedChange> | undefined {
    if (this.#phase !== 'running' || this.#running > 0 || this.#laneBusy > 0 || this.#retrying > 0) return undefined;
    if (!this.#stopped && this.#ready.size + this.#readyInteractive.size > 0) return undefined;
    if (!this.#stopped && this.#unfinished > 0) {
      this.#stopped = 'stall';
      const waiting = this.#entries.filter((entry) => entry.state !== 'done').map((entry) => entry.row);
      const gates = (row: TaskRow) => this.#closedGatesOf(row).map((id) => ({ id, gate: this.#closedGates.get(id)! }));
      this.#stopReason = describeStall(waiting, this.#byId, gates);
    }
    for (const entry of this.#entries) if (entry.state !== 'done' && entry.row.status === 'in_progress') entry.row.status = 'pending';
    this.#phase = 'over';
    return { type: 'run-done', stopped: this.#stopped, reason: this.#stopReason };
  }
}

