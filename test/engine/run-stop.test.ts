import { describe, expect, test } from 'vitest';
import type { StopReason } from '../../src/events/events.js';
import { writeStopReason } from '../../src/run/run-outcome.js';
import { RunStop } from '../../src/run/run-stop.js';

function recordingScheduler(): { stops: [StopReason, string][]; stop(reason: StopReason, explanation: string): void } {
  const stops: [StopReason, string][] = [];
  return { stops, stop: (reason, explanation) => stops.push([reason, explanation]) };
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
});
