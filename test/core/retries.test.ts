import { describe, expect, it } from 'vitest';
import { backoffMs, kMaxRetryDelayMs } from '../../src/core/state/retry-policy.js';
import type { Effect } from '../../src/core/effects.js';
import type { SchedulingCore } from '../../src/core/scheduling-core.js';
import { err, fail, simulate, task, type Script } from './simulate.js';

describe('retry schedule: exponential from the base, jitter from the injected random', () => {
  it.each<[number, number, number, number]>([
    // attempt, base, random, delay
    [1, 100, 0.5, 100],
    [2, 100, 0.5, 200],
    [3, 100, 0.5, 400],
    [1, 100, 0, 50],
    [3, 100, 0, 200],
    [1, 100, 0.999, 150],
    [20, 100, 0.5, kMaxRetryDelayMs],
    [20, 100, 0, kMaxRetryDelayMs / 2],
  ])('attempt %i, base %i ms, random %f: %i ms', (attempt, base, random, delay) => {
    expect(backoffMs(attempt, base, () => random)).toBe(delay);
  });

  it.each(['transient', 'rate-limited', 'timeout'])('a %s error is retried with the backoff, then completes', (errorClass) => {
    const script: Script = (_id, attempt) => (attempt <= 3 ? err(errorClass) : undefined);
    const sim = simulate([task('A')], script, { retries: 3, random: () => 0.25 });
    expect(sim.log.filter((line) => /^(start|retry|done)/.test(line))).toEqual([
      'start A#1',
      'retry A#1 in 75',
      'start A#2',
      'retry A#2 in 150',
      'start A#3',
      'retry A#3 in 300',
      'start A#4',
      'done A completed',
    ]);
  });

  it('Retry-After from the reply wins over the backoff', () => {
    const sim = simulate([task('A')], (_id, attempt) => (attempt === 1 ? err('rate-limited', 'slow', 7000) : undefined), { retries: 1 });
    expect(sim.log).toContain('retry A#1 in 7000');
  });

  it.each<[string, number, string]>([
    ['retries 0: the first attempt is the last', 0, 'done A failed: t'],
    ['retries 2: three attempts', 2, 'done A failed: t'],
  ])('%s', (_name, retries, last) => {
    const sim = simulate([task('A')], () => err('transient', 't'), { retries });
    expect(sim.starts).toHaveLength(retries + 1);
    expect(sim.log).toContain(last);
  });

  it.each(['task-failure', 'invalid-output'])('a %s error is not retried', (errorClass) => {
    const sim = simulate([task('A')], () => err(errorClass, 'no'), { retries: 3 });
    expect(sim.starts).toEqual(['A#1']);
    expect(sim.rows[0]!.status).toBe('failed');
  });

  it('a stop cancels the planned retries; the task goes back to pending', () => {
    const stopOnRetry = (effect: Effect, core: SchedulingCore) =>
      effect.type === 'retry' ? core.stop('signal', 'Interrupted') : undefined;
    const sim = simulate([task('A'), task('B', 'A')], () => err('transient'), { retries: 3, onEffect: stopOnRetry });
    expect(sim.log.slice(-2)).toEqual(['cancel A', 'run-done signal']);
    expect(sim.rows.map((row) => row.status)).toEqual(['pending', 'pending']);
  });
});

describe('a worker crash gets one isolated retry, at once', () => {
  it('crash, then completes on its own thread', () => {
    const sim = simulate([task('A')], (_id, attempt) => (attempt === 1 ? err('worker-crash') : undefined));
    expect(sim.log.filter((line) => /^(start|retry|done)/.test(line))).toEqual(['start A#1', 'retry A#1 in 0', 'start A#2 isolated', 'done A completed']);
  });

  it('crash twice: failed, even with retries left, and counted for --halt', () => {
    const sim = simulate([task('A'), task('B')], (id) => (id === 'A' ? err('worker-crash', 'died') : undefined), {
      retries: 5,
      concurrency: 1,
      halt: { count: 1 },
    });
    expect(sim.starts).toEqual(['A#1', 'B#1', 'A#2']);
    expect(sim.log).toContain('done A failed: died');
    expect(sim.outcome?.stopped).toBe('halt');
  });
});

describe('an io error: the session failed the task, not the task itself', () => {
  it.each(['waves', 'eager'] as const)('%s: back to pending, dependents untouched, nothing new starts, run stops', (schedule) => {
    const rows = [task('A'), task('B'), task('C', 'A'), task('D')];
    const sim = simulate(rows, (id) => (id === 'A' ? err('io', 'EROFS') : undefined), { schedule, concurrency: 1 });
    expect(sim.starts).toEqual(['A#1']);
    expect(sim.rows.map((row) => row.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(sim.outcome).toEqual({ stopped: 'io', reason: 'Stopped: A could not write its files into the session folder (EROFS)' });
  });
});

describe('stop', () => {
  it('before the start: the gate still opens and doomed tasks are skipped, but nothing starts', () => {
    const rows = [task('F', '', { status: 'failed' }), task('A', 'F'), task('B')];
    const sim = simulate(rows, undefined, { runIds: ['A', 'B'], before: (core) => core.stop('signal', 'Interrupted') });
    expect(sim.starts).toEqual([]);
    expect(sim.log).toEqual(['wave-start 1 (1)', 'wave-file 1', 'done A skipped: Dependency failed or skipped: F (failed)', 'run-done signal']);
    expect(sim.rows.map((row) => row.status)).toEqual(['failed', 'skipped', 'pending']);
  });

  it('a stop a listener makes while a task starts is seen before the next one starts', () => {
    const rows = ['a', 'b', 'c'].map((id) => task(id));
    const sim = simulate(rows, () => fail(), {
      concurrency: 3,
      onEffect: (effect, core) => (effect.type === 'dispatch' ? core.stop('edited', 'saved by a person') : undefined),
    });
    expect(sim.starts).toEqual(['a#1']);
    expect(sim.outcome).toEqual({ stopped: 'edited', reason: 'saved by a person' });
    expect(sim.rows.map((row) => row.status)).toEqual(['failed', 'pending', 'pending']);
  });

  it('the first reason is kept', () => {
    const sim = simulate([task('a'), task('b')], undefined, {
      concurrency: 1,
      onEffect: (effect, core) => {
        if (effect.type !== 'dispatch') return undefined;
        return [...core.stop('signal', 'first'), ...core.stop('halt', 'second')];
      },
    });
    expect(sim.outcome).toEqual({ stopped: 'signal', reason: 'first' });
  });
});
