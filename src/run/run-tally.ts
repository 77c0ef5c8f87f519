import type { TaskRow } from '../core/task.js';
import type { RunEmitter, RunSummary } from '../events/events.js';
import type { RunEnding } from './run-outcome.js';
import { countByStatus } from '../commands/status-report.js';

/**
 * What a run did, counted from its events, for its summary: a halt or a stop leaves
 * scheduled tasks that never started, and tasks added during the run (a GC round, a
 * discussion) ran in it too.
 */
export class RunTally {
  readonly #planned: number;
  readonly #started = new Set<string>();
  #attempts = 0;
  #added = 0;

  /** @param planned the tasks the run set out to run */
  constructor(events: RunEmitter, planned: number) {
    this.#planned = planned;
    events.on('task:start', (event) => {
      this.#started.add(event.id);
      this.#attempts++;
    });
    events.on('tasks:changed', (change) => {
      this.#added += change.added.length - change.removed.length;
    });
  }

  /** The run's summary, from the tally, the rows as the run left them, and its outcome. */
  summary(rows: readonly TaskRow[], durationMs: number, outcome: RunEnding & { exitCode: number }, cache?: { tasks: number; saved_usd: number }): RunSummary {
    return {
      total: this.#planned + this.#added,
      ran: this.#started.size,
      attempts: this.#attempts,
      ...(cache === undefined || cache.tasks === 0 ? {} : { cache }),
      counts: countByStatus(rows),
      durationMs,
      stopped: outcome.stopped,
      reason: outcome.reason,
      exitCode: outcome.exitCode,
    };
  }
}
