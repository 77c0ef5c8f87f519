import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { attachReporter } from '../../src/cli/progress.js';
import { RunEmitter, type RunSummary } from '../../src/events/events.js';

/** A terminal that keeps what is written and tells each write. */
class Terminal extends Writable {
  readonly isTTY = true;
  readonly columns = 160;
  text = '';
  #waiting: { pattern: RegExp; resolve: () => void } | undefined;

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    if (this.#waiting?.pattern.test(this.text)) this.#waiting.resolve();
    done();
  }

  /** Resolves once the text written so far matches. */
  shows(pattern: RegExp): Promise<void> {
    if (pattern.test(this.text)) return Promise.resolve();
    return new Promise((resolve) => (this.#waiting = { pattern, resolve }));
  }
}

const summary: RunSummary = {
  total: 500,
  ran: 500,
  attempts: 500,
  counts: { pending: 0, in_progress: 0, completed: 500, failed: 0, skipped: 0 },
  durationMs: 10,
  stopped: undefined,
  reason: '',
  exitCode: 0,
};

describe('the live bar under a burst of events', () => {
  it('shows the counts of a turn that started and finished hundreds of tasks', async () => {
    const terminal = new Terminal();
    const events = new RunEmitter();
    attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    events.emit('run:start', { session: 's', total: 600, waveCount: 2 });
    for (let i = 0; i < 500; i++) events.emit('task:start', { id: `t${i}`, wave: 1, attempt: 1 });
    for (let i = 0; i < 500; i++) {
      events.emit('task:done', { id: `t${i}`, wave: 1, status: 'completed', findings: 'ok', gc_signal: '', severity_summary: '', error: '', attempts: 1, durationMs: 1 });
    }
    events.emit('task:start', { id: 'last', wave: 2, attempt: 1 });
    // The bar catches up with the whole burst (the redraw is once per turn, and the bar's own timer draws it).
    await terminal.shows(/wave 2\/2 .* 500\/600 done \| 1 running \| 0 failed/);
    events.emit('run:done', summary);
    expect(terminal.text).toContain('Ran 500 task(s)');
  });
});
