import type { WaveEffect } from '../effects.js';
import type { Entry } from './entry.js';

/**
 * The waves of a run: which one the gate is at, which still have unfinished or unstarted
 * tasks, and the wave lines (`wave:start`, `wave:done`) and wave files owed, in wave order.
 */
export class WaveBook {
  readonly #schedule: 'waves' | 'eager';
  /** The run's entries (the core's own array: dynamic tasks are appended to it). */
  readonly #entries: readonly Entry[];
  readonly #unfinishedByWave = new Map<number, number>();
  readonly #unstartedByWave = new Map<number, number>();
  /** Waves with a task that started (not only skipped): the waves that get a wave file. */
  readonly #wavesThatRan = new Set<number>();
  /** Waves with unfinished tasks, in order: where the gate may go. */
  #openWaves: number[] = [];
  /** Tasks of this run in each wave, finished or not, and every such wave in order: for the wave lines. */
  readonly #sizeByWave = new Map<number, number>();
  #allWaves: number[] = [];
  /** Index in #allWaves of the first wave not reported done yet. */
  #nextWaveToReport = 0;
  /** Tasks that wait on nothing but whose wave the gate has not reached (schedule `waves`), by wave. */
  readonly #held = new Map<number, Entry[]>();
  #lastWaveStarted = 0;
  #lastWaveDone = 0;
  #current = 0;

  constructor(schedule: 'waves' | 'eager', entries: readonly Entry[]) {
    this.#schedule = schedule;
    this.#entries = entries;
  }

  /** The wave the gate is at: under `waves`, no task of a later wave starts. */
  get current(): number {
    return this.#current;
  }

  /** Whether the wave the gate is at has no unfinished task (true before the gate moved at all). */
  currentDone(): boolean {
    return (this.#unfinishedByWave.get(this.#current) ?? 0) === 0;
  }

  /** Holds a task at the gate when its wave is not open yet (schedule `waves`); false when it may be queued. */
  hold(entry: Entry): boolean {
    if (this.#schedule !== 'waves' || entry.wave <= this.#current) return false;
    entry.state = 'held';
    const held = this.#held.get(entry.wave);
    if (held) held.push(entry);
    else this.#held.set(entry.wave, [entry]);
    return true;
  }

  /** The tasks held for `wave`, still held (a change may have made one wait again), now let go. */
  release(wave: number): Entry[] {
    const held = (this.#held.get(wave) ?? []).filter((entry) => entry.state === 'held');
    this.#held.delete(wave);
    return held;
  }

  /** Lets go of every held task, back to waiting: a change moved tasks between waves, they are admitted again. */
  dropHeld(): void {
    for (const held of this.#held.values()) for (const entry of held) if (entry.state === 'held') entry.state = 'waiting';
    this.#held.clear();
  }

  /** Counts again from the entries: at the start, and after a change moved tasks between waves. */
  recount(): void {
    this.#unfinishedByWave.clear();
    this.#unstartedByWave.clear();
    this.#sizeByWave.clear();
    for (const { wave, state, attempts } of this.#entries) {
      this.#sizeByWave.set(wave, (this.#sizeByWave.get(wave) ?? 0) + 1);
      if (state === 'done') continue;
      this.#unfinishedByWave.set(wave, (this.#unfinishedByWave.get(wave) ?? 0) + 1);
      if (attempts === 0) this.#unstartedByWave.set(wave, (this.#unstartedByWave.get(wave) ?? 0) + 1);
    }
    this.#openWaves = [...this.#unfinishedByWave.keys()].sort((a, b) => a - b);
    this.#allWaves = [...this.#sizeByWave.keys()].sort((a, b) => a - b);
    const next = this.#allWaves.findIndex((wave) => wave > this.#lastWaveDone);
    this.#nextWaveToReport = next === -1 ? this.#allWaves.length : next;
  }

  /** Moves the gate to the lowest wave with unfinished tasks; returns it when the gate moved. */
  nextOpen(): number | undefined {
    const next = this.#openWaves.find((wave) => (this.#unfinishedByWave.get(wave) ?? 0) > 0);
    if (next === undefined || next === this.#current) return undefined;
    this.#current = next;
    return next;
  }

  /** A task of `wave` started for the first time (`ran`), or was skipped without starting; the wave file then owed (eager). */
  dispatched(wave: number, ran: boolean): WaveEffect | undefined {
    if (ran) this.#wavesThatRan.add(wave);
    const left = (this.#unstartedByWave.get(wave) ?? 1) - 1;
    this.#unstartedByWave.set(wave, left);
    // A wave whose every task was skipped never runs, and under `waves` it gets no file
    // either: both schedules write the same wave files.
    return left === 0 && this.#schedule === 'eager' && this.#wavesThatRan.has(wave) ? { type: 'wave-file', wave } : undefined;
  }

  /** A task of `wave` finished; true when that was the last of the wave the gate is at. */
  finished(wave: number): boolean {
    const left = this.#unfinishedByWave.get(wave)! - 1;
    this.#unfinishedByWave.set(wave, left);
    return left === 0 && wave === this.#current;
  }

  /**
   * The wave lines owed, in wave order, whatever order tasks finish in: wave N is done once
   * it and every wave before it have no unfinished task, so a later wave whose tasks were
   * all skipped early (a failure, a GC round that converged) waits for the waves before it.
   * Under `waves` each wave is started first: when the gate reaches it, or when it is
   * passed over because nothing of it is left to run.
   */
  report(): WaveEffect[] {
    const lines: WaveEffect[] = [];
    for (let wave = this.#allWaves[this.#nextWaveToReport]; wave !== undefined; wave = this.#allWaves[this.#nextWaveToReport]) {
      const unfinished = this.#unfinishedByWave.get(wave) ?? 0;
      if (unfinished > 0 && wave > this.#current) break;
      if (this.#schedule === 'waves' && wave > this.#lastWaveStarted) {
        this.#lastWaveStarted = wave;
        lines.push({ type: 'wave-start', wave, tasks: this.#sizeByWave.get(wave) ?? 0 });
      }
      if (unfinished > 0) break;
      this.#lastWaveDone = wave;
      this.#nextWaveToReport++;
      lines.push(this.#waveDone(wave));
    }
    return lines;
  }

  #waveDone(wave: number): WaveEffect {
    let completed = 0;
    let failed = 0;
    let skipped = 0;
    for (const entry of this.#entries) {
      if (entry.wave !== wave) continue;
      if (entry.row.status === 'completed') completed++;
      else if (entry.row.status === 'failed') failed++;
      else if (entry.row.status === 'skipped') skipped++;
    }
    return { type: 'wave-done', wave, completed, failed, skipped };
  }
}
