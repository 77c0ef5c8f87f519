import { describe, expect, test } from 'vitest';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { InFlight } from '../../src/engine/in-flight.js';

function rows(...ids: string[]): TaskRow[] {
  return ids.map((id) => ({ ...emptyRow(), id, status: 'in_progress' }));
}

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

describe('InFlight', () => {
  test('passes on an answer it keeps, and is not drained: nothing was taken back', async () => {
    const table = rows('a');
    const inFlight = new InFlight((id) => table.find((row) => row.id === id));
    const work = pending<string>();
    const tracked = inFlight.track('a', work.promise, () => true);
    work.resolve('done');
    await expect(tracked).resolves.toBe('done');
    expect(table[0]!.status).toBe('in_progress');
    expect(await settled(inFlight.drained)).toBe(false);
  });

  test('passes on a failure', async () => {
    const inFlight = new InFlight(() => undefined);
    const work = pending<string>();
    const tracked = inFlight.track('a', work.promise, () => true);
    work.reject(new Error('worker died'));
    await expect(tracked).rejects.toThrow('worker died');
  });

  test('an answer it does not keep takes the task back: pending again, never passed on, drained', async () => {
    const table = rows('a');
    const inFlight = new InFlight((id) => table.find((row) => row.id === id));
    const work = pending<string>();
    const tracked = inFlight.track('a', work.promise, (value) => value !== 'failed for the disk');
    work.resolve('failed for the disk');
    await inFlight.drained;
    expect(table[0]!.status).toBe('pending');
    expect(await settled(tracked)).toBe(false);
  });

  test('takeBackAll takes back every task out, ignores their later answers, and drains only when none is left', async () => {
    const table = rows('a', 'b', 'c');
    const inFlight = new InFlight((id) => table.find((row) => row.id === id));
    const a = pending<string>();
    const b = pending<string>();
    const c = pending<string>();
    const trackedA = inFlight.track('a', a.promise, () => true);
    const trackedB = inFlight.track('b', b.promise, () => true);
    inFlight.track('c', c.promise, () => true);
    c.resolve('c done');
    await new Promise((resolve) => setImmediate(resolve));
    expect(inFlight.takeBackAll()).toEqual(['a', 'b']);
    expect(table.map((row) => row.status)).toEqual(['pending', 'pending', 'in_progress']);
    a.resolve('late');
    b.reject(new Error('late'));
    await inFlight.drained;
    expect(await settled(trackedA)).toBe(false);
    expect(await settled(trackedB)).toBe(false);
    expect(inFlight.takeBackAll()).toEqual([]);
  });
});
