import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AttemptEnd, AttemptLine } from '../../schema/attempt.js';
import type { CacheNote } from '../../executors/messages.js';
import type { AttemptDetail, TaskDoneEvent, TaskRetryEvent, TaskStartEvent } from '../../events/events.js';
import type { Journal } from '../../session/journal.js';

/** An error kept in attempts.ndjson is cut here: the whole one is in tasks.csv and the discovery file. */
const kMaxErrorChars = 2000;

/**
 * The lines of attempts.ndjson, one per finished attempt, written through the journal (same
 * group commit). Told each attempt's start, retry and finish by the outcome sink, before the
 * run's event of each: the start of an attempt is the time it was told.
 */
export class AttemptLog {
  readonly #journal: Journal;
  readonly #run = randomUUID();
  readonly #host = hostname();
  /** When each running task's current attempt started, and its wave. */
  readonly #started = new Map<string, number>();
  readonly #waves = new Map<string, number>();
  // Attempts of a busy run end (and start) many to a millisecond: each time is formatted once.
  readonly #startText = isoText();
  readonly #endText = isoText();

  constructor(journal: Journal) {
    this.#journal = journal;
  }

  started(event: TaskStartEvent): void {
    this.#started.set(event.id, Date.now());
    this.#waves.set(event.id, event.wave);
  }

  retried(event: TaskRetryEvent): void {
    this.#line(event.id, event.attempt, this.#waves.get(event.id) ?? 0, 'retried', event.errorClass, event.error, event);
  }

  /** `note`: the result cache's note of a completed result (its key; whether it came from the cache). */
  finished(event: TaskDoneEvent, note?: CacheNote): void {
    this.#waves.delete(event.id);
    // A task skipped without running made no attempt.
    if (event.status === 'skipped' && !this.#started.has(event.id)) return;
    const outcome: AttemptEnd = event.status === 'completed' ? 'completed' : 'failed';
    this.#line(event.id, event.attempts, event.wave, outcome, event.errorClass ?? '', event.status === 'completed' ? '' : event.error, event, note);
  }

  /**
   * An attempt a `csv-wave worker` ran (detail.worker, from its signed reply) is recorded as
   * the worker tells it: its host and pid, its execution time there as duration_ms, ending
   * when its reply came (start is end less that, on this machine's clock), and the time its
   * job waited besides as queued_ms. Any other attempt (this machine's, or a worker's that
   * told nothing: an older csv-wave, a refused job) is this process's, timed here.
   */
  #line(id: string, attempt: number, wave: number, outcome: AttemptEnd, errorClass: string, error: string, detail: AttemptDetail, note?: CacheNote): void {
    const end = Date.now();
    const { worker } = detail;
    const start = worker === undefined ? (this.#started.get(id) ?? end) : end - worker.ranMs;
    this.#started.delete(id);
    this.#journal.appendAttempt({
      run: this.#run,
      task: id,
      attempt,
      wave,
      start: this.#startText(start),
      end: this.#endText(end),
      duration_ms: end - start,
      ...(worker === undefined ? {} : { queued_ms: worker.queuedMs }),
      outcome,
      error_class: errorClass,
      error: error.slice(0, kMaxErrorChars),
      thread: detail.thread ?? null,
      host: worker?.host ?? this.#host,
      pid: worker?.pid ?? process.pid,
      prompt_tokens: detail.usage?.prompt_tokens ?? 0,
      completion_tokens: detail.usage?.completion_tokens ?? 0,
      ...(note === undefined || outcome !== 'completed' ? {} : cacheFields(note)),
    });
  }
}

/** A completed line's key, and `cached`/`saved_usd` for a result taken from the cache. */
function cacheFields(note: CacheNote): Pick<AttemptLine, 'key' | 'input_key' | 'cached' | 'saved_usd'> {
  return {
    key: note.key,
    ...(note.inputKey === undefined ? {} : { input_key: note.inputKey }),
    ...(note.cached === true ? { cached: true as const } : {}),
    ...(note.savedUsd === undefined ? {} : { saved_usd: note.savedUsd }),
  };
}

/** `new Date(ms).toISOString()`, remembering the last time it was asked for. */
function isoText(): (ms: number) => string {
  let lastMs = Number.NaN;
  let last = '';
  return (ms) => {
    if (ms !== lastMs) {
      lastMs = ms;
      last = new Date(ms).toISOString();
    }
    return last;
  };
}
