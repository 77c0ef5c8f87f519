/**
 * A synchronous driver for the scheduling core: no pool, no timers, no files. Attempts are
 * answered by a script, retry delays pass on a virtual clock, and every effect is logged
 * in a short text form that the tables of test/core compare.
 */
import { splitList } from '../../src/core/id-list.js';
import { emptyRow, type TaskRow } from '../../src/core/task.js';
import { buildDag } from '../../src/graph/dag.js';
import { computeWaves } from '../../src/graph/waves.js';
import type { CoreReply, Effect } from '../../src/core/effects.js';
import type { CoreOptions } from '../../src/core/core-options.js';
import { SchedulingCore } from '../../src/core/scheduling-core.js';
import type { TaskChanges } from '../../src/core/session-changes.js';
import type { StopReason } from '../../src/core/stop-reason.js';

/** A task as the tables write it: `id`, then `deps` (`;`-separated) and the other cells. */
export function task(id: string, deps = '', cells: Partial<TaskRow> = {}): TaskRow {
  return Object.assign(emptyRow(), { id, deps, description: id, role: 'r', gc_round: '0', exec_mode: 'csv-wave', status: 'pending' }, cells);
}

export const ok = (findings = 'done'): CoreReply => ({ kind: 'finished', status: 'completed', findings, gc_signal: '', severity_summary: '', error: '' });
export const fail = (error = 'boom'): CoreReply => ({ kind: 'finished', status: 'failed', findings: '', gc_signal: '', severity_summary: '', error });
export const err = (errorClass: string, error = errorClass, retryAfterMs?: number): CoreReply => ({
  kind: 'error',
  errorClass,
  error,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

/** What an attempt answers: a reply, or a reply with session changes (interactive tasks). */
export type Answer = CoreReply | { reply: CoreReply; changes: TaskChanges };
/** The answer of attempt `attempt` of task `id`; `ok()` when the script has none. */
export type Script = (id: string, attempt: number) => Answer | undefined;

export interface Simulation {
  /** The effects in order, one short line each. */
  log: string[];
  /** `start` lines only: `A#1` for attempt 1 of A. */
  starts: string[];
  rows: TaskRow[];
  outcome: { stopped: StopReason | undefined; reason: string } | undefined;
  core: SchedulingCore;
}

export interface SimulateOptions extends Partial<CoreOptions> {
  /** Tasks of the run (default: every row). */
  runIds?: string[];
  /** Which running attempt answers next (default: the oldest). */
  pick?: (running: readonly string[]) => number;
  /** Called with each effect as the driver performs it (a listener that stops the run, say). */
  onEffect?: (effect: Effect, core: SchedulingCore) => Iterable<Effect> | undefined;
  /** Fed to the core before `start` (a stop that came first, say). */
  before?: (core: SchedulingCore) => Iterable<Effect>;
}

const kDefaults: CoreOptions = {
  schedule: 'waves',
  concurrency: 2,
  retries: 0,
  retryBaseMs: 100,
  halt: undefined,
  retryable: new Set(['rate-limited', 'transient', 'timeout']),
  random: () => 0.5,
};

export function simulate(rows: TaskRow[], script: Script = () => undefined, options: SimulateOptions = {}): Simulation {
  const { waves } = computeWaves(buildDag(rows.map((row) => ({ id: row.id, deps: splitList(row.deps) }))));
  const runIds = new Set(options.runIds ?? rows.map((row) => row.id));
  const core = new SchedulingCore(rows, waves, runIds, { ...kDefaults, ...options });
  const sim: Simulation = { log: [], starts: [], rows, outcome: undefined, core };
  const running: { id: string; attempt: number }[] = [];
  const timers: { at: number; id: string }[] = [];
  let now = 0;
  const perform = (effects: Iterable<Effect>): void => {
    for (const effect of effects) {
      // Edit points are where a driver may feed an edit of tasks.csv (onEffect); the tables leave them out.
      if (effect.type !== 'edit-point') sim.log.push(describe(effect));
      if (effect.type === 'dispatch') {
        sim.starts.push(`${effect.row.id}#${effect.attempt}`);
        running.push({ id: effect.row.id, attempt: effect.attempt });
      } else if (effect.type === 'retry') timers.push({ at: now + effect.delayMs, id: effect.id });
      else if (effect.type === 'cancel-retry') timers.splice(timers.findIndex((timer) => timer.id === effect.id), 1);
      else if (effect.type === 'run-done') sim.outcome = { stopped: effect.stopped, reason: effect.reason };
      const more = options.onEffect?.(effect, core);
      if (more) perform(more);
    }
  };
  if (options.before) perform(options.before(core));
  perform(core.start());
  for (let turn = 0; turn < 10_000 && !sim.outcome; turn++) {
    if (running.length > 0) {
      const [attempt] = running.splice(options.pick?.(running.map((entry) => entry.id)) ?? 0, 1);
      const answer = script(attempt!.id, attempt!.attempt) ?? ok();
      perform('reply' in answer ? core.settled(attempt!.id, answer.reply, answer.changes) : core.settled(attempt!.id, answer));
    } else if (timers.length > 0) {
      timers.sort((a, b) => a.at - b.at);
      const timer = timers.shift()!;
      now = timer.at;
      perform(core.retryDue(timer.id));
    } else break;
  }
  return sim;
}

function describe(effect: Effect): string {
  switch (effect.type) {
    case 'dispatch':
      return `start ${effect.row.id}#${effect.attempt}${effect.isolated ? ' isolated' : ''}`;
    case 'retry':
      return `retry ${effect.id}#${effect.attempt} in ${effect.delayMs}`;
    case 'cancel-retry':
      return `cancel ${effect.id}`;
    case 'finished':
      return `done ${effect.row.id} ${effect.status}${effect.row.error === '' ? '' : `: ${effect.row.error}`}`;
    case 'wave-start':
      return `wave-start ${effect.wave} (${effect.tasks})`;
    case 'wave-file':
      return `wave-file ${effect.wave}`;
    case 'wave-done':
      return `wave-done ${effect.wave} ${effect.completed}/${effect.failed}/${effect.skipped}`;
    case 'tasks-changed': {
      const removed = effect.removed.length > 0 ? ` -${effect.removed.join(',')}` : '';
      return `changed +${effect.added.map((row) => row.id).join(',')} ~${effect.updated.map((update) => update.id).join(',')}${removed} waves=${effect.waveCount}`;
    }
    case 'edit-point':
      return 'edit-point';
    case 'run-done':
      return `run-done ${effect.stopped ?? 'complete'}`;
  }
}

/** Status and error of every row, for comparing two runs. */
export function finalRecords(rows: readonly TaskRow[]): Record<string, string> {
  return Object.fromEntries(rows.map((row) => [row.id, `${row.status}${row.error === '' ? '' : `: ${row.error}`}`]));
}
