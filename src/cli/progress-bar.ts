import { createRequire } from 'node:module';
import type { RunEmitter } from '../events/events.js';
import { errorLine } from '../text/error-line.js';
import { formatDuration } from '../knowledge/context-report.js';
import { batchProgressLine, editLine, endOfRunText, gateLine, injectLine, type FailedTask } from './summary-text.js';

/** cli-progress, loaded when a bar is drawn: a run whose output is not a terminal never needs it. */
const loadCliProgress = () => createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');

/** Where the live bar draws: stderr on a terminal, or a fake terminal in tests. */
export type TerminalStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * The live bar of a run on a terminal: wave k/W, done/total, queued (--backend bullmq),
 * running, failed, elapsed, ETA. Failures and warnings are printed above it as they happen
 * (the bar alone only counts them), and the end-of-run text replaces it.
 */
export function attachBar(events: RunEmitter, terminal: TerminalStream, failures: readonly FailedTask[]): () => void {
  const cliProgress = loadCliProgress();
  const bar = new cliProgress.SingleBar(
    {
      format: 'wave {wave}/{waves} [{bar}] {value}/{total} done | {queued}{running} running | {failed} failed | {elapsed} | ETA {remaining}{workers}',
      hideCursor: true,
      // Erased when stopped, so that a line printed above it does not leave a stale copy behind.
      clearOnComplete: true,
      stream: terminal,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let live = false;
  let total = 0;
  let running = 0;
  let done = 0;
  let wave = 0;
  let waves = 0;
  /** With --backend bullmq, the workers listening to the queue. */
  let workers = '';
  /** With --backend bullmq (run:start's `queue`): a started task waits in the queue until a worker takes it (task:running). */
  let queues = false;
  /** The tasks out whose current attempt waits in the queue: counted apart from `running`. */
  const queued = new Set<string>();
  const payload = () => {
    const elapsedMs = Date.now() - started;
    return {
      wave,
      waves,
      queued: queues ? `${queued.size} queued | ` : '',
      running: running - queued.size,
      failed: failures.length,
      elapsed: formatDuration(elapsedMs),
      remaining: eta(done, total, elapsedMs),
      workers,
    };
  };
  // Redrawn once per turn of the event loop, not per event: a turn may finish hundreds of
  // short tasks, and each redraw formats the whole payload. Failures and warnings still
  // draw at once (printAbove).
  let redrawDue = false;
  const redraw = () => {
    redrawDue = false;
    if (live) bar.update(done, payload());
  };
  const show = () => {
    if (redrawDue || !live) return;
    redrawDue = true;
    setImmediate(redraw).unref();
  };
  /** Prints whole lines above the bar: the bar is taken down, the lines written, the bar drawn again below. */
  const printAbove = (text: string) => {
    if (live) bar.stop();
    terminal.write(text);
    if (live) bar.start(total, done, payload());
  };

  events.on('warning', (message) => printAbove(`warning: ${message}\n`));
  // A batch may take hours: its progress is the only sign of life, and changes seldom.
  events.on('batch:progress', (event) => printAbove(batchProgressLine(event)));
  events.on('gate:decided', (event) => printAbove(gateLine(event)));
  events.on('task:injected', (event) => printAbove(injectLine(event)));
  events.on('run:start', (event) => {
    total = event.total;
    waves = event.waveCount;
    queues = event.queue === true;
    live = true;
    bar.start(total, done, payload());
  });
  events.on('tasks:edited', (event) => printAbove(editLine(event)));
  events.on('tasks:changed', ({ added, removed, waveCount }) => {
    waves = waveCount;
    total += added.length - removed.length;
    bar.setTotal(total);
    show();
  });
  events.on('wave:start', (event) => {
    wave = event.wave;
    show();
  });
  events.on('workers:connected', (count) => {
    workers = ` | ${count} worker(s)`;
    show();
  });
  events.on('task:start', (event) => {
    if (event.attempt === 1) running++;
    if (queues) queued.add(event.id);
    if (event.wave > wave) wave = event.wave;
    show();
  });
  events.on('task:running', (event) => {
    if (queued.delete(event.id)) show();
  });
  events.on('task:done', (event) => {
    if (event.attempts > 0) running--;
    queued.delete(event.id);
    done++;
    // The reporter records the failure before this listener runs (it attached first).
    if (event.status === 'failed') printAbove(`[FAIL] ${event.id} (wave ${event.wave}): ${errorLine(event.error)}\n`);
    else show();
  });
  const takeDown = () => {
    if (live) bar.stop();
    live = false;
  };
  events.on('run:done', (summary) => {
    takeDown();
    terminal.write(endOfRunText(summary, failures));
  });
  // For a run that ends without run:done (it threw): the bar's redraw timer would keep the process alive.
  return takeDown;
}

/** The time left at the pace so far; `–` until a task has finished, as there is no pace before. */
export function eta(done: number, total: number, elapsedMs: number): string {
  if (done === 0) return '–';
  return formatDuration((elapsedMs / done) * Math.max(0, total - done));
}
