import type { RunEmitter } from '../events/events.js';
import { errorLine } from '../text/error-line.js';
import { formatDuration } from '../knowledge/context-report.js';
import { formatUsd } from '../knowledge/pricing.js';
import type { CliIo } from './io.js';
import { attachBar, type TerminalStream } from './progress-bar.js';
import { batchProgressLine, endOfRunText, oneLine, type FailedTask } from './summary-text.js';

export type ReporterMode = 'tty' | 'lines' | 'json';

/**
 * Shows a run as it goes, from the engine's events (listr2 renderers style): a live bar on
 * a terminal (`terminal`, stderr by default), one plain line per event otherwise, nothing
 * but the final JSON with --json. Warnings always go to stderr. Both the bar and the lines
 * end with the tasks that failed in the run and a summary. Returns what takes the display
 * down when a run ends without `run:done`.
 */
export function attachReporter(
  events: RunEmitter,
  io: CliIo,
  mode: ReporterMode,
  terminal: TerminalStream = process.stderr,
): () => void {
  const failures: FailedTask[] = [];
  events.on('task:done', (event) => {
    if (event.status === 'failed') failures.push({ id: event.id, error: event.error });
  });
  if (mode === 'tty') return attachBar(events, terminal, failures);
  events.on('warning', (message) => io.stderr(`warning: ${message}\n`));
  if (mode !== 'json') {
    attachLines(events, io);
    events.on('run:done', (summary) => io.stdout(endOfRunText(summary, failures)));
  }
  return () => {};
}

function attachLines(events: RunEmitter, io: CliIo): void {
  events.on('wave:start', ({ wave, tasks }) => io.stdout(`Wave ${wave}: ${tasks} task(s)\n`));
  events.on('workers:connected', (count) => io.stdout(`[WORKERS] ${count} worker(s) take the session's jobs\n`));
  events.on('task:retry', (event) =>
    io.stdout(
      `[RETRY] ${event.id} attempt ${event.attempt} failed (${event.errorClass}): ${errorLine(event.error)}; again in ${formatDuration(event.delayMs)}\n`,
    ),
  );
  events.on('task:done', (event) => {
    const tag = event.status === 'completed' ? (event.cache?.cached ? '[CACHED]' : '[DONE]') : event.status === 'failed' ? '[FAIL]' : '[SKIP]';
    // Findings show their beginning; an error its whole first line (errorLine).
    const detail = event.status === 'completed' ? oneLine(event.findings) : errorLine(event.error);
    // A cached result took no time worth telling: its line says what was not spent.
    const took = event.cache?.cached ? `from the cache${event.cache.savedUsd ? `, ${formatUsd(event.cache.savedUsd)} not spent` : ''}` : formatDuration(event.durationMs);
    io.stdout(`${tag} ${event.id} (wave ${event.wave}, ${took}) -> ${detail}\n`);
  });
  events.on('batch:progress', (event) => io.stdout(batchProgressLine(event)));
  events.on('wave:done', (event) =>
    io.stdout(`Wave ${event.wave} done: ${event.completed} completed, ${event.failed} failed, ${event.skipped} skipped\n`),
  );
}
