import type { RunEmitter } from '../events/events.js';
import { errorLine } from '../text/error-line.js';
import { formatDuration } from '../knowledge/context-report.js';
import { formatUsd } from '../knowledge/pricing.js';
import type { CliIo } from './io.js';
import { attachBar, type TerminalStream } from './progress-bar.js';
import { oneLine } from '../text/one-line.js';
import { batchProgressLine, editLine, endOfRunText, gateLine, injectLine, type FailedTask } from './summary-text.js';

/** Characters of a task's findings on its `[DONE]` line. */
const kFindingsChars = 60;

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
  // A task of a later wave can end before its wave's header (a skip: its dependency failed
  // while its own wave waits). Its line waits for that header, so every task line comes
  // under the header of its wave. With --schedule eager there are no headers: nothing waits.
  let lastStarted = 0;
  const held = new Map<number, string[]>();
  const release = (wave: number) => {
    for (const line of held.get(wave) ?? []) io.stdout(line);
    held.delete(wave);
  };
  events.on('wave:start', ({ wave, tasks }) => {
    io.stdout(`Wave ${wave}: ${tasks} task(s)\n`);
    lastStarted = Math.max(lastStarted, wave);
    release(wave);
  });
  events.on('workers:connected', (count) => io.stdout(`[WORKERS] ${count} worker(s) take the session's jobs\n`));
  events.on('task:retry', (event) =>
    io.stdout(
      `[RETRY] ${event.id} attempt ${event.attempt} failed (${event.errorClass}): ${errorLine(event.error)}; again in ${formatDuration(event.delayMs)}\n`,
    ),
  );
  events.on('task:done', (event) => {
    const tag = event.status === 'completed' ? (event.cache?.cached ? '[CACHED]' : '[DONE]') : event.status === 'failed' ? '[FAIL]' : '[SKIP]';
    // Findings show their beginning, cut between words; an error its whole first line (errorLine).
    const detail = event.status === 'completed' ? oneLine(event.findings, kFindingsChars) : errorLine(event.error);
    // With --backend bullmq the duration is the workers' time; the wait for them is said apart.
    const queued = event.queuedMs === undefined ? '' : `, queued ${formatDuration(event.queuedMs)}`;
    // A cached result took no time worth telling: its line says what was not spent.
    const took = event.cache?.cached ? `from the cache${event.cache.savedUsd ? `, ${formatUsd(event.cache.savedUsd)} not spent` : ''}` : `${formatDuration(event.durationMs)}${queued}`;
    const line = `${tag} ${event.id} (wave ${event.wave}, ${took}) -> ${detail}\n`;
    if (lastStarted > 0 && event.wave > lastStarted) held.set(event.wave, [...(held.get(event.wave) ?? []), line]);
    else io.stdout(line);
  });
  events.on('batch:progress', (event) => io.stdout(batchProgressLine(event)));
  events.on('gate:decided', (event) => io.stdout(gateLine(event)));
  events.on('task:injected', (event) => io.stdout(injectLine(event)));
  events.on('tasks:edited', (event) => io.stdout(editLine(event)));
  events.on('wave:done', (event) => {
    release(event.wave);
    io.stdout(`Wave ${event.wave} done: ${event.completed} completed, ${event.failed} failed, ${event.skipped} skipped\n`);
  });
  // A run that stops before a wave starts still shows what ended in it.
  events.on('run:done', () => {
    for (const wave of [...held.keys()].sort((a, b) => a - b)) release(wave);
  });
}
