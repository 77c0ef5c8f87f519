import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { Interrupt, type InterruptOptions } from '../../src/run/interrupt.js';

interface Calls {
  stops: string[];
  takeBacks: number;
  kills: number;
  warnings: string[];
}

function interrupt(options: Partial<InterruptOptions>, running: string[] = ['a', 'b']): { interrupt: Interrupt; calls: Calls } {
  const calls: Calls = { stops: [], takeBacks: 0, kills: 0, warnings: [] };
  const made = new Interrupt({
    graceSeconds: 10,
    path: 'my-session',
    stop: (_reason, explanation) => calls.stops.push(explanation),
    takeBackAll: () => {
      calls.takeBacks++;
      return running;
    },
    killCommands: () => calls.kills++,
    warn: (message) => calls.warnings.push(message),
    ...options,
  });
  return { interrupt: made, calls };
}

const kGentle =
  'Interrupted: no new task was started; running tasks were let finish and recorded. Run `csv-wave resume my-session` to go on.';

describe('Interrupt', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  test('a signal stops starting tasks; running ones are taken back when the grace is over, not before', () => {
    const signal = new AbortController();
    const { interrupt: made, calls } = interrupt({ signal: signal.signal });
    expect(calls.stops).toEqual([]);
    signal.abort();
    expect(calls.stops).toEqual([kGentle]);
    vi.advanceTimersByTime(9_999);
    expect(calls.takeBacks).toBe(0);
    expect(made.reason()).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(calls.takeBacks).toBe(1);
    expect(calls.kills).toBe(1);
    expect(calls.warnings).toEqual(['Stopped 2 running task(s) (a, b); they are pending again']);
    expect(made.takenBack).toEqual(['a', 'b']);
    expect(made.reason()).toBe(
      'Interrupted: no new task was started; running tasks had 10s to finish, and the 2 that had not (a, b) ' +
        'were stopped and put back to pending. Run `csv-wave resume my-session` to go on.',
    );
  });

  test('a kill signal ends the grace at once, and tasks are taken back only once', () => {
    const signal = new AbortController();
    const killSignal = new AbortController();
    const { interrupt: made, calls } = interrupt({ signal: signal.signal, killSignal: killSignal.signal });
    signal.abort();
    killSignal.abort();
    expect(calls.takeBacks).toBe(1);
    vi.runAllTimers();
    expect(calls.takeBacks).toBe(1);
    expect(made.reason()).toBe(
      'Interrupted: no new task was started; the 2 running task(s) (a, b) were stopped at once and put back to pending. ' +
        'Run `csv-wave resume my-session` to go on.',
    );
  });

  test('signals aborted before the run count as soon as it listens', () => {
    const killSignal = new AbortController();
    killSignal.abort();
    const { calls } = interrupt({ killSignal: killSignal.signal });
    expect(calls.stops).toEqual([kGentle]);
    expect(calls.takeBacks).toBe(1);
  });

  test('nothing running: no warning, no kill, and the first words of the stop stand', () => {
    const signal = new AbortController();
    const { interrupt: made, calls } = interrupt({ signal: signal.signal }, []);
    signal.abort();
    vi.runAllTimers();
    expect(calls.takeBacks).toBe(1);
    expect(calls.kills).toBe(0);
    expect(calls.warnings).toEqual([]);
    expect(made.takenBack).toEqual([]);
    expect(made.reason()).toBeUndefined();
  });

  test('once disposed, the grace timer is gone and signals are not heard', () => {
    const signal = new AbortController();
    const killSignal = new AbortController();
    const { interrupt: made, calls } = interrupt({ signal: signal.signal, killSignal: killSignal.signal });
    signal.abort();
    made.dispose();
    vi.runAllTimers();
    killSignal.abort();
    expect(calls.stops).toEqual([kGentle]);
    expect(calls.takeBacks).toBe(0);
  });
});
