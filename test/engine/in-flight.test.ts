import { describe, expect, test } from 'vitest';
import { InFlight } from '../../src/run/in-flight.js';

/** A promise and the hand that settles it. */
function pending<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether the promise has settled once every callback queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

/** An InFlight that records what it tells the scheduler. */
function inFlight(): { tracker: InFlight; told: string[][] } {
  const told: string[][] = [];
  return { tracker: new InFlight((ids) => told.push(ids)), told };
}

describe('InFlight', () => {
  test('passes on an answer it keeps, and tells the scheduler of no take-back', async () => {
    const { tracker, told } = inFlight();
    const work = pending<string>();
    const tracked = tracker.track('a', work.promise, () => true);
    work.resolve('done');
    await expect(tracked).resolves.toBe('done');
    expect(told).toEqual([]);
    expect(tracker.tookBack).toBe(false);
  });

  test('passes on a failure', async () => {
    const { tracker } = inFlight();
    const work = pending<string>();
    const tracked = tracker.track('a', work.promise, () => true);
    work.reject(new Error('worker died'));
    await expect(tracked).rejects.toThrow('worker died');
  });

  test('an answer it does not keep takes the task back: the scheduler is told, the answer never passed on', async () => {
    const { tracker, told } = inFlight();
    const work = pending<string>();
    const tracked = tracker.track('a', work.promise, (value) => value !== 'failed for the disk');
    work.resolve('failed for the disk');
    expect(await settled(tracked)).toBe(false);
    expect(told).toEqual([['a']]);
    expect(tracker.tookBack).toBe(true);
  });

  test('takeBackAll takes back every task out at once and ignores their later answers', async () => {
    const { tracker, told } = inFlight();
    const a = pending<string>();
    const b = pending<string>();
    const c = pending<string>();
    const trackedA = tracker.track('a', a.promise, () => true);
    const trackedB = tracker.track('b', b.promise, () => true);
    const trackedC = tracker.track('c', c.promise, () => true);
    c.resolve('c done');
    await expect(trackedC).resolves.toBe('c done');
    expect(tracker.takeBackAll()).toEqual(['a', 'b']);
    expect(told).toEqual([['a', 'b']]);
    a.resolve('late');
    b.reject(new Error('late'));
    expect(await settled(trackedA)).toBe(false);
    expect(await settled(trackedB)).toBe(false);
    expect(tracker.takeBackAll()).toEqual([]);
    expect(told).toEqual([['a', 'b']]);
  });
});
