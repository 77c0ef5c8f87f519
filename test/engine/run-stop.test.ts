import { describe, expect, test } from 'vitest';
import type { StopReason } from '../../src/events/events.js';
import { writeStopReason } from '../../src/run/run-outcome.js';
import { RunStop } from '../../src/run/run-stop.js';

function recordingScheduler(): { stops: [StopReason, string][]; stop(reason: StopReason, explanation: string): void; takeBack(): void } {
  const stops: [StopReason, string][] = [];
  return { stops, stop: (reason, explanation) => stops.push([reason, explanation]), takeBack: () => {} };
}

describe('RunStop', () => {
  test('the first stop is the one the run reports; the scheduler hears of one asked for before it existed', () => {
    const stop = new RunStop('s', () => {});
    expect(stop.first).toBeUndefined();
    stop.stop('halt', 'too many failed');
    stop.stop('signal', 'Ctrl-C');
    expect(stop.first).toEqual({ stopped: 'halt', reason: 'too many failed' });
    const scheduler = recordingScheduler();
    stop.attach(scheduler);
    expect(scheduler.stops).toEqual([['halt', 'too many failed']]);
    stop.stop('edited', 'saved');
    expect(scheduler.stops).toEqual([
      ['halt', 'too many failed'],
      ['edited', 'saved'],
    ]);
    expect(stop.first).toEqual({ stopped: 'halt', reason: 'too many failed' });
  });

  test('a scheduler attached before any stop is told nothing yet', () => {
    const stop = new RunStop('s', () => {});
    const scheduler = recordingScheduler();
    stop.attach(scheduler);
    expect(scheduler.stops).toEqual([]);
  });

  test('a failed write warns once and stops the run as io, saying what to do', () => {
    const warnings: string[] = [];
    const stop = new RunStop('my-session', (message) => warnings.push(message));
    const scheduler = recordingScheduler();
    stop.attach(scheduler);
    stop.writeFailed(new Error('ENOSPC: no space left on device'));
    stop.writeFailed(new Error('EROFS: read-only file system'));
    expect(stop.writeProblem).toBe('ENOSPC: no space left on device');
    expect(warnings).toEqual(['ENOSPC: no space left on device: no new task will start; running tasks finish into the journal']);
    const reason = writeStopReason('ENOSPC: no space left on device', 'my-session', false);
    expect(scheduler.stops).toEqual([['io', reason]]);
    expect(stop.first).toEqual({ stopped: 'io', reason });
  });

  test('guarded turns what a write throws into a stop, and lets work that succeeds be', () => {
    const stop = new RunStop('s', () => {});
    let ran = false;
    stop.guarded(() => {
      ran = true;
    });
    expect(ran).toBe(true);
    expect(stop.writeProblem).toBeUndefined();
    stop.guarded(() => {
      throw 'disk gone';
    });
    expect(stop.writeProblem).toBe('disk gone');
    expect(stop.first?.stopped).toBe('io');
  });

  test('a backend that lost its tasks stops the run as io and takes the tasks out back; the run then ends on that stop', async () => {
    const stop = new RunStop('s', () => {});
    const taken: string[][] = [];
    const scheduler = { ...recordingScheduler(), takeBack: (ids: readonly string[]) => taken.push([...ids]) };
    stop.attach(scheduler);
    const never = new Promise<never>(() => {});
    void stop.inFlight.track('A', never, () => true);
    void stop.inFlight.track('B', never, () => true);
    stop.backendLost('Stopped: Redis went away');
    expect(taken).toEqual([['A', 'B']]);
    expect(scheduler.stops).toEqual([['io', 'Stopped: Redis went away']]);
    expect(stop.ending({ stopped: undefined, reason: '' })).toEqual({ stopped: 'io', reason: 'Stopped: Redis went away' });
  });

  test('a reply of class io is a failed write: kept until then, and after it a failed reply goes back to pending', () => {
    const stop = new RunStop('s', () => {});
    expect(stop.keeps({ kind: 'error', errorClass: 'timeout', error: 'slow' })).toBe(true);
    expect(stop.keeps({ kind: 'error', errorClass: 'io', error: 'EROFS' })).toBe(false);
    expect(stop.writeProblem).toBe('EROFS');
    expect(stop.keeps({ kind: 'error', errorClass: 'timeout', error: 'slow' })).toBe(false);
    expect(stop.ending({ stopped: 'halt', reason: 'scheduler' })).toEqual({ stopped: 'halt', reason: 'scheduler' });
  });

  test('a spent budget halts, saying how to go on', () => {
    const stop = new RunStop('my-session', () => {});
    stop.budgetReached('the budget of 1000 tokens is spent');
    expect(stop.first).toEqual({
      stopped: 'halt',
      reason: 'Halted: the budget of 1000 tokens is spent; no new tasks were started. Raise the budget and run `csv-wave resume my-session` to go on.',
    });
  });
});
