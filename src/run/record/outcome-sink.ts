import type { AttemptJobs } from '../../backend/execution-backend.js';
import type { TaskRow } from '../../core/task.js';
import { rowCells } from '../../csv/tasks-table.js';
import type { CacheNote, WorkerReply } from '../../executors/messages.js';
import { AttemptLog } from './attempt-log.js';
import type { TaskDoneEvent, TaskRetryEvent, TaskStartEvent } from '../../events/events.js';
import type { Journal } from '../../session/journal.js';
import type { KnowledgeSink } from './knowledge-sink.js';
import type { RecordedChange, RunRecorder } from '../scheduler.js';
import type { PrevContexts } from '../prev-contexts.js';

export interface OutcomeSinkSetup {
  journal: Journal;
  /** The files a finished task leaves (discoveries, wisdom, usage) and the wave files. */
  knowledge: Pick<KnowledgeSink, 'taskFinished' | 'waveReady'>;
  /** Runs a write of the knowledge files; one that fails stops the run instead of being thrown (RunStop.guarded). */
  guarded: (work: () => void) => void;
  /**
   * When attempts run as jobs elsewhere (--backend bullmq): `started`, the job of an
   * attempt, which its start entry records before the job is added (a resume awaits again
   * only a job its journal names; the backend flushes the journal before each add);
   * `finished`, the job whose reply finished it, which the finish entry records, to find
   * the job in Redis.
   */
  jobs?: AttemptJobs | undefined;
  /** The result cache's note of a task's completed result (its key, whether it came from the cache): set on its finish event. */
  cacheNote?: ((id: string) => CacheNote | undefined) | undefined;
  /**
   * Told of every change of the session's tasks once it is journaled: what the run's own
   * tasks added and rewired, so that a person's save that still shows the old cells is
   * read as older, not as their edit (session/edits/edit-ledger.ts).
   */
  changed?: (change: RecordedChange) => void;
  /**
   * The session's contracts (dynamic/session-dynamics.ts): told each finished task before its
   * finish entry, so that artifact-registry.json holds what its result changed first.
   */
  contracts?: { finished(row: TaskRow, reply: WorkerReply | undefined): void };
}

/**
 * Records every change of a run, called by the scheduler before it emits the change's
 * public event: a listener that throws, exits the process or never returns cannot lose or
 * delay a result. A finish, a retry and the tasks an interactive task added or rewired are
 * in the journal file (and each attempt's line in attempts.ndjson) when their event is
 * emitted; a finished task's knowledge files are written before its finish entry, so that
 * a crash between the two runs the task again rather than keep its result without its files.
 */
export class OutcomeSink implements RunRecorder {
  readonly #setup: OutcomeSinkSetup;
  readonly #journal: Journal;
  readonly #attempts: AttemptLog;

  constructor(setup: OutcomeSinkSetup) {
    this.#setup = setup;
    this.#journal = setup.journal;
    this.#attempts = new AttemptLog(setup.journal);
  }

  /**
   * Left to the journal's group commit: a start is no result (a task the journal shows
   * started is pending again after a crash, as one it does not show), and a write per
   * start would be a system call per task on the busiest path of a run.
   */
  started(event: TaskStartEvent): void {
    this.#attempts.started(event);
    const job = this.#setup.jobs?.started(event.id, event.attempt);
    this.#journal.append({ type: 'start', id: event.id, attempt: event.attempt, ...(job === undefined ? {} : { job }) });
  }

  retried(event: TaskRetryEvent): void {
    this.#attempts.retried(event);
    this.#journal.flush();
  }

  finished(row: TaskRow, reply: WorkerReply | undefined, event: TaskDoneEvent, skips?: readonly { id: string; error: string }[]): void {
    const { knowledge, guarded, jobs, contracts } = this.#setup;
    if (contracts !== undefined) guarded(() => contracts.finished(row, reply));
    const note = event.status === 'completed' ? this.#setup.cacheNote?.(event.id) : undefined;
    // The event, heard once this returns, tells a result that came from the cache (the run prints [CACHED]).
    if (note?.cached === true) event.cache = note;
    guarded(() => knowledge.taskFinished(row, reply));
    this.#attempts.finished(event, note);
    const job = event.attempts > 0 ? jobs?.finished(event.id, event.attempts) : undefined;
    this.#journal.append({
      type: 'finish',
      id: event.id,
      status: event.status,
      findings: event.findings,
      gc_signal: event.gc_signal,
      severity_summary: event.severity_summary,
      error: event.error,
      ...(event.route === undefined ? {} : { route: event.route }),
      ...(job === undefined ? {} : { job }),
      // In the same line as the result that decided them: the skips' own entries come after, in other writes.
      ...(skips === undefined || skips.length === 0 ? {} : { skips }),
    });
    // Written now, not at the group commit: the entry is durable when task:done is heard.
    this.#journal.flush();
  }

  /** Journaled and written at once: a person's edit is in the journal before tasks.csv shows it. */
  tasksChanged(change: RecordedChange): void {
    for (const id of change.removed) this.#journal.append({ type: 'remove', id });
    for (const row of change.added) this.#journal.append({ type: 'add', row: rowCells(row) });
    for (const update of change.updated) this.#journal.append({ type: 'update', ...update });
    this.#journal.flush();
    this.#setup.changed?.(change);
  }

  waveReady(wave: number, contexts: PrevContexts): void {
    const { knowledge, guarded } = this.#setup;
    guarded(() => knowledge.waveReady(wave, contexts));
  }
}
