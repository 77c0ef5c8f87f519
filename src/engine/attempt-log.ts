import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AttemptEnd } from '../schema/attempt.js';
import type { AttemptDetail, RunEmitter } from './events.js';
import type { Journal } from './journal.js';

/** An error kept in attempts.ndjson is cut here: the whole one is in tasks.csv and the discovery file. */
const kMaxErrorChars = 2000;

/**
 * Writes one attempts.ndjson line per finished attempt, from the run's events, through
 * the journal (same group commit). The start of an attempt is the time of its task:start.
 */
export function recordAttempts(events: RunEmitter, journal: Journal): void {
  const run = randomUUID();
  const host = hostname();
  const started = new Map<string, number>();
  // Attempts of a busy run end (and start) many to a millisecond: each time is formatted once.
  const startText = isoText();
  const endText = isoText();
  const line = (
    id: string,
    attempt: number,
    wave: number,
    outcome: AttemptEnd,
    errorClass: string,
    error: string,
    detail: AttemptDetail,
  ): void => {
    const end = Date.now();
    const start = started.get(id) ?? end;
    started.delete(id);
    journal.appendAttempt({
      run,
      task: id,
      attempt,
      wave,
      start: startText(start),
      end: endText(end),
      duration_ms: end - start,
      outcome,
      error_class: errorClass,
      error: error.slice(0, kMaxErrorChars),
      thread: detail.thread ?? null,
      host,
      pid: process.pid,
      prompt_tokens: detail.usage?.prompt_tokens ?? 0,
      completion_tokens: detail.usage?.completion_tokens ?? 0,
    });
  };
  const waves = new Map<string, number>();
  events.on('task:start', (event) => {
    started.set(event.id, Date.now());
    waves.set(event.id, event.wave);
  });
  events.on('task:retry', (event) =>
    line(event.id, event.attempt, waves.get(event.id) ?? 0, 'retried', event.errorClass, event.error, event),
  );
  events.on('task:done', (event) => {
    waves.delete(event.id);
    // A task skipped without running made no attempt.
    if (event.status === 'skipped' && !started.has(event.id)) return;
    const outcome: AttemptEnd = event.status === 'completed' ? 'completed' : 'failed';
    line(event.id, event.attempts, event.wave, outcome, event.errorClass ?? '', event.status === 'completed' ? '' : event.error, event);
  });
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
