/**
 * Workloads with known task durations for the latency and schedule benchmarks: seeded
 * durations, the DAG they run on, and what an engine with no overhead would do with them
 * (list scheduling, as csv-wave's scheduler orders ready tasks: file order), so that a
 * measured run can be set against its ideal and its lower bound.
 */
import { mulberry32 } from '../gen-dag.js';
import { normal } from './lib.js';

/** Integer milliseconds, uniform in [min, max]. */
export function uniformDurations(count: number, min: number, max: number, seed: number): number[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => min + Math.floor(random() * (max - min + 1)));
}

/** Integer milliseconds (at least 1), log-normal: exp(N(ln median, sigma²)). */
export function logNormalDurations(count: number, medianMs: number, sigma: number, seed: number): number[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => Math.max(1, Math.round(medianMs * Math.exp(sigma * normal(random)))));
}

/** Deps by task index, read back from a tasks.csv text of gen-dag's layout (ids T + digits, in order). */
export function depsOf(csv: string): number[][] {
  const lines = csv.trimEnd().split('\n').slice(1);
  return lines.map((line) => {
    // Cells are double-quoted without inner quotes in the deps column (the 7th).
    const cells = line.split('","');
    const deps = cells[6] ?? '';
    return deps === '' ? [] : deps.split(';').map((id) => Number(id.slice(1)) - 1);
  });
}

/** Longest path by duration (the critical path), tasks in topological (file) order. */
export function criticalPath(durations: readonly number[], deps: readonly (readonly number[])[]): number {
  const finish = new Array<number>(durations.length).fill(0);
  let longest = 0;
  for (let task = 0; task < durations.length; task++) {
    let start = 0;
    for (const dep of deps[task]!) start = Math.max(start, finish[dep]!);
    finish[task] = start + durations[task]!;
    longest = Math.max(longest, finish[task]!);
  }
  return longest;
}

/** A binary min-heap of numbers keyed by `key`. */
class Heap {
  readonly #items: number[] = [];
  constructor(readonly key: (item: number) => number) {}
  get size(): number {
    return this.#items.length;
  }
  push(item: number): void {
    const items = this.#items;
    items.push(item);
    for (let at = items.length - 1; at > 0; ) {
      const parent = (at - 1) >> 1;
      if (this.key(items[parent]!) <= this.key(items[at]!)) break;
      [items[at], items[parent]] = [items[parent]!, items[at]!];
      at = parent;
    }
  }
  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let at = 0; ; ) {
        const left = 2 * at + 1;
        let smallest = at;
        if (left < items.length && this.key(items[left]!) < this.key(items[smallest]!)) smallest = left;
        if (left + 1 < items.length && this.key(items[left + 1]!) < this.key(items[smallest]!)) smallest = left + 1;
        if (smallest === at) break;
        [items[at], items[smallest]] = [items[smallest]!, items[at]!];
        at = smallest;
      }
    }
    return top;
  }
}

/**
 * The makespan of list scheduling with `slots` tasks at once and no overhead: a free slot
 * takes the ready task first in file order. Eager: a task is ready once its deps are done.
 * Waves: once every task of the waves before its own is done (waves from the deps).
 */
export function simulate(durations: readonly number[], deps: readonly (readonly number[])[], slots: number, schedule: 'eager' | 'waves'): number {
  const count = durations.length;
  const wave = new Array<number>(count).fill(1);
  for (let task = 0; task < count; task++) for (const dep of deps[task]!) wave[task] = Math.max(wave[task]!, wave[dep]! + 1);
  const dependents: number[][] = Array.from({ length: count }, () => []);
  const remaining = deps.map((list) => list.length);
  deps.forEach((list, task) => list.forEach((dep) => dependents[dep]!.push(task)));
  const ready = new Heap((task) => task);
  const finishAt = new Float64Array(count);
  const running = new Heap((task) => finishAt[task]!);
  const unfinishedByWave = new Map<number, number>();
  for (const w of wave) unfinishedByWave.set(w, (unfinishedByWave.get(w) ?? 0) + 1);
  let currentWave = 1;
  const held: number[] = [];
  const release = (task: number) => {
    if (schedule === 'eager' || wave[task] === currentWave) ready.push(task);
    else held.push(task);
  };
  for (let task = 0; task < count; task++) if (remaining[task] === 0) release(task);
  let now = 0;
  let done = 0;
  while (done < count) {
    while (running.size < slots && ready.size > 0) {
      const task = ready.pop()!;
      finishAt[task] = now + durations[task]!;
      running.push(task);
    }
    const task = running.pop();
    if (task === undefined) throw new Error('simulate: nothing runs and nothing is ready (a cycle?)');
    now = finishAt[task]!;
    done++;
    for (const next of dependents[task]!) if (--remaining[next]! === 0) release(next);
    const left = unfinishedByWave.get(wave[task]!)! - 1;
    unfinishedByWave.set(wave[task]!, left);
    if (schedule === 'waves' && left === 0 && wave[task] === currentWave) {
      while ((unfinishedByWave.get(currentWave) ?? 0) === 0 && unfinishedByWave.has(currentWave + 1)) currentWave++;
      for (let i = held.length - 1; i >= 0; i--) {
        if (wave[held[i]!] === currentWave) {
          ready.push(held[i]!);
          held.splice(i, 1);
        }
      }
    }
  }
  return now;
}
