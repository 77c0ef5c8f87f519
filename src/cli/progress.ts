import cliProgress from 'cli-progress';
import type { RunEmitter, RunSummary } from '../engine/events.js';
import { formatDuration } from '../knowledge/context-report.js';
import type { CliIo } from './io.js';

export type ReporterMode = 'tty' | 'lines' | 'json';

/**
 * Shows a run as it goes, from the engine's events (listr2 renderers style): a live bar on
 * a terminal, one plain line per event otherwise, nothing but the final JSON with --json.
 * Warnings always go to stderr.
 */
export function attachReporter(events: RunEmitter, io: CliIo, mode: ReporterMode): void {
  events.on('warning', (message) => io.stderr(`warning: ${message}\n`));
  if (mode === 'json') return;
  if (mode === 'tty') attachBar(events);
  else attachLines(events, io);
  events.on('run:done', (summary) => {
    if (mode === 'tty') return;
    io.stdout(`${summaryLine(summary)}\n`);
  });
}

function oneLine(text: string, length = 60): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, length);
}

function attachLines(events: RunEmitter, io: CliIo): void {
  events.on('wave:start', ({ wave, tasks }) => io.stdout(`Wave ${wave}: ${tasks} task(s)\n`));
  events.on('task:retry', (event) =>
    io.stdout(
      `[RETRY] ${event.id} attempt ${event.attempt} failed (${event.errorClass}): ${oneLine(event.error, 120)}; again in ${formatDuration(event.delayMs)}\n`,
    ),
  );
  events.on('task:done', (event) => {
    const tag = event.status === 'completed' ? '[DONE]' : event.status === 'failed' ? '[FAIL]' : '[SKIP]';
    const detail = event.status === 'completed' ? event.findings : event.error;
    io.stdout(`${tag} ${event.id} (wave ${event.wave}, ${formatDuration(event.durationMs)}) -> ${oneLine(detail)}\n`);
  });
  events.on('wave:done', (event) =>
    io.stdout(`Wave ${event.wave} done: ${event.completed} completed, ${event.failed} failed, ${event.skipped} skipped\n`),
  );
}

function attachBar(events: RunEmitter): void {
  const bar = new cliProgress.SingleBar(
    {
      format: 'wave {wave}/{waves} [{bar}] {value}/{total} done | {running} running | {failed} failed | {elapsed} | ETA {eta_formatted}',
      hideCursor: true,
      stream: process.stderr,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let running = 0;
  let failed = 0;
  let done = 0;
  let wave = 0;
  let waves = 0;
  const payload = () => ({ wave, waves, running, failed, elapsed: formatDuration(Date.now() - started) });
  events.on('run:start', ({ total, waveCount }) => {
    waves = waveCount;
    bar.start(total, 0, payload());
  });
  events.on('tasks:changed', ({ added, waveCount }) => {
    waves = waveCount;
    bar.setTotal(bar.getTotal() + added.length);
    bar.update(done, payload());
  });
  events.on('wave:start', (event) => {
    wave = event.wave;
    bar.update(done, payload());
  });
  events.on('task:start', (event) => {
    if (event.attempt === 1) running++;
    if (event.wave > wave) wave = event.wave;
    bar.update(done, payload());
  });
  events.on('task:done', (event) => {
    if (event.attempts > 0) running--;
    if (event.status === 'failed') failed++;
    done++;
    bar.update(done, payload());
  });
  events.on('run:done', (summary) => {
    bar.stop();
    process.stderr.write(`${summaryLine(summary)}\n`);
  });
}

/** What ran, not what was scheduled: `Ran 6 of 50 task(s)`, and the attempts when some were retried. */
function ranText({ ran, total, attempts }: RunSummary): string {
  const tasks = ran === total ? `Ran ${ran} task(s)` : `Ran ${ran} of ${total} task(s)`;
  return attempts > ran ? `${tasks} (${attempts} attempts)` : tasks;
}

export function summaryLine(summary: RunSummary): string {
  const { counts } = summary;
  const head = summary.total === 0 ? 'Nothing to run: every task is finished' : `${ranText(summary)} in ${formatDuration(summary.durationMs)}`;
  const tally = `completed ${counts.completed}, failed ${counts.failed}, skipped ${counts.skipped}, pending ${counts.pending}`;
  return `${head} (session: ${tally})${summary.reason === '' ? '' : `\n${summary.reason}`}`;
}
