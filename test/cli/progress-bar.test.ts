import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eta } from '../../src/cli/progress-bar.js';
import { attachReporter } from '../../src/cli/progress.js';
import { RunEmitter, type RunSummary, type TaskDoneEvent } from '../../src/events/events.js';

// The live bar of a terminal, drawn on a fake terminal: a stream that says it is a TTY and
// keeps what is written, escape codes and all.

class FakeTerminal extends Writable {
  readonly isTTY = true;
  readonly columns = 160;
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }

  /**
   * What a person sees, roughly: a move to a column starts the line again (the bar only
   * ever moves to column 1), the other escape sequences are dropped.
   */
  lines(): string[] {
    // eslint-disable-next-line no-control-regex
    const plain = this.text.replace(/\x1b\[\d*G/g, '\r').replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
    return plain.split('\n').map((line) => line.split('\r').at(-1)!);
  }
}

function done(id: string, status: TaskDoneEvent['status'], error = ''): TaskDoneEvent {
  return { id, wave: 1, status, findings: status === 'completed' ? 'ok' : '', gc_signal: '', severity_summary: '', error, attempts: status === 'skipped' ? 0 : 1, durationMs: 5 };
}

function summary(counts: Partial<RunSummary['counts']>): RunSummary {
  return {
    total: 3,
    ran: 3,
    attempts: 3,
    counts: { pending: 0, in_progress: 0, completed: 0, failed: 0, skipped: 0, ...counts },
    durationMs: 1200,
    stopped: undefined,
    reason: '',
    exitCode: 1,
  };
}

describe('the live bar on a terminal', () => {
  it('prints each failure (id, error) above the bar as it happens, and lists the failures again at the end', () => {
    const terminal = new FakeTerminal();
    const events = new RunEmitter();
    attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    events.emit('run:start', { session: 's', total: 3, waveCount: 1 });
    for (const id of ['a', 'b', 'c']) events.emit('task:start', { id, wave: 1, attempt: 1 });
    events.emit('task:done', done('a', 'failed', 'Command exited with code 3:\nno such file'));
    const afterFirstFailure = terminal.lines();
    events.emit('task:done', done('b', 'completed'));
    events.emit('task:done', done('c', 'failed', 'timed out after 5s'));
    events.emit('run:done', summary({ completed: 1, failed: 2 }));

    const lines = terminal.lines();
    // Each failure is a line of its own as soon as it happens, the bar drawn again below it.
    expect(afterFirstFailure).toContain('[FAIL] a (wave 1): Command exited with code 3: no such file');
    expect(afterFirstFailure.at(-1)).toMatch(/^wave 1\/1 .* 1\/3 done \| 2 running \| 1 failed \|/);
    expect(lines).toContain('[FAIL] c (wave 1): timed out after 5s');
    // At the end: the failures again, then the summary line; the bar is gone.
    const end = lines.indexOf('Failed in this run (2):');
    expect(end).toBeGreaterThan(-1);
    expect(lines.slice(end, end + 4)).toEqual([
      'Failed in this run (2):',
      '  a: Command exited with code 3: no such file',
      '  c: timed out after 5s',
      'Ran 3 task(s) in 1.2s (session: completed 1, failed 2, skipped 0, pending 0)',
    ]);
  });

  it('shows ETA – until a task has finished, then a time', () => {
    const terminal = new FakeTerminal();
    const events = new RunEmitter();
    attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    events.emit('run:start', { session: 's', total: 2, waveCount: 1 });
    const first = terminal.lines().at(-1)!;
    expect(first).toMatch(/^wave 0\/1 .* 0\/2 done .*\| ETA –$/);
    events.emit('task:start', { id: 'a', wave: 1, attempt: 1 });
    events.emit('task:done', done('a', 'failed', 'boom'));
    expect(terminal.lines().at(-1)).toMatch(/\| ETA \d+\.\ds$/);
    events.emit('run:done', summary({ failed: 1, pending: 1 }));
  });

  it('warnings go above the bar too', () => {
    const terminal = new FakeTerminal();
    const events = new RunEmitter();
    attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    events.emit('run:start', { session: 's', total: 1, waveCount: 1 });
    events.emit('warning', 'something to know');
    const lines = terminal.lines();
    expect(lines).toContain('warning: something to know');
    expect(lines.at(-1)).toMatch(/^wave 0\/1 /);
    events.emit('run:done', summary({ pending: 1 }));
  });
});

describe('taking the bar down', () => {
  it('a run that ends without run:done (it threw): the returned function stops the bar and shows the cursor again', () => {
    const terminal = new FakeTerminal();
    const events = new RunEmitter();
    const takeDown = attachReporter(events, { stdout: () => {}, stderr: () => {} }, 'tty', terminal);
    events.emit('run:start', { session: 's', total: 2, waveCount: 1 });
    const drawn = terminal.text.length;
    expect(terminal.text).toContain('\x1b[?25l'); // the bar hid the cursor
    takeDown();
    expect(terminal.text.slice(drawn)).toContain('\x1b[?25h');
    // Events after that draw nothing.
    const after = terminal.text.length;
    events.emit('task:start', { id: 'a', wave: 1, attempt: 1 });
    expect(terminal.text.length).toBe(after);
  });
});

describe('eta', () => {
  it('is – before anything finished, then the time left at the pace so far', () => {
    expect(eta(0, 10, 5000)).toBe('–');
    expect(eta(2, 10, 4000)).toBe('16.0s');
    expect(eta(10, 10, 4000)).toBe('0.0s');
  });
});
