import { rowCells } from '../csv/tasks-table.js';
import { recordAttempts } from './attempt-log.js';
import type { RunEmitter } from './events.js';
import type { Journal } from './journal.js';

/**
 * Journals a run from its events, so that every state change is durable before tasks.csv
 * shows it: starts, finishes, the tasks an interactive task added or rewired, and one
 * attempts.ndjson line per attempt.
 *
 * @param jobs when attempts run as jobs elsewhere (--backend bullmq): `started`, the job of
 *   an attempt, which its start entry records before the job is added (a resume awaits
 *   again only a job its journal names); `finished`, the job whose reply finished it, which
 *   the finish entry records, to find the job in Redis.
 */
export function journalRun(
  events: RunEmitter,
  journal: Journal,
  jobs?: { started: (task: string, attempt: number) => string; finished: (task: string, attempt: number) => string | undefined },
): void {
  recordAttempts(events, journal);
  events.on('task:start', (event) => {
    const job = jobs?.started(event.id, event.attempt);
    journal.append({ type: 'start', id: event.id, attempt: event.attempt, ...(job === undefined ? {} : { job }) });
  });
  events.on('tasks:changed', (change) => {
    for (const row of change.added) journal.append({ type: 'add', row: rowCells(row) });
    for (const update of change.updated) journal.append({ type: 'update', ...update });
  });
  events.on('task:done', (event) => {
    const job = event.attempts > 0 ? jobs?.finished(event.id, event.attempts) : undefined;
    journal.append({
      type: 'finish',
      id: event.id,
      status: event.status,
      findings: event.findings,
      gc_signal: event.gc_signal,
      severity_summary: event.severity_summary,
      error: event.error,
      ...(job === undefined ? {} : { job }),
    });
  });
}
