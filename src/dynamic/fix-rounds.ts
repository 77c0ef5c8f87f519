import { splitList } from '../core/id-list.js';
import { rejectedCause } from '../core/skip-cause.js';
import type { TaskRow } from '../core/task.js';
import { newRow } from '../pipelines/new-row.js';
import type { RegistryEntry } from '../schema/artifact-manifest.js';
import { isPending, type ChangeBuilder } from './change-builder.js';

/** @default 2 fix rounds per task before its failed artifacts block what waits on them */
export const kDefaultMaxFixRounds = 2;

/** `IMPL-001` for `IMPL-001`, `IMPL-001-fix-2` and `IMPL-001-recheck-1`: the task a round started from. */
export function rootOf(id: string): string {
  return id.replace(/-(?:fix|recheck)-\d+$/, '');
}

/** Whether an id is a fix round's fix (`IMPL-001-fix-2`). */
export function isFix(id: string): boolean {
  return /-fix-\d+$/.test(id);
}

/** The fix rounds appended for a task so far: the highest `<root>-fix-N`. */
function roundsOf(rows: readonly TaskRow[], root: string): number {
  const pattern = new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-fix-(\\d+)$`);
  let rounds = 0;
  for (const row of rows) {
    const match = pattern.exec(row.id);
    if (match) rounds = Math.max(rounds, Number(match[1]));
  }
  return rounds;
}

export interface FixRoundSetup {
  /** Whether a task validates its dependencies' artifacts. */
  validates: (row: TaskRow) => boolean;
  maxFixRounds: number;
}

/**
 * What a failed validation changes (seed 003: "failed → block spawn, trigger fix loop"),
 * like a GC round: for each task whose artifacts `judge` failed (a validator, or the task
 * itself when its own manifest says failed), a fix task of the maker's role
 * (`IMPL-001-fix-1`, after the judge, reading both) and, when a validator judged, a
 * recheck of the validator's role after it (`TEST-001-recheck-1`). What waited on the maker
 * or on the judge waits on the recheck (or the fix) instead, and reads the fix. Past
 * `maxFixRounds`, nothing is appended: what waited on them is skipped as blocked by the
 * artifact (a failure of the run). A judge deciding again (a resume after a kill that came
 * between its round being journaled and its finish) finds its round and appends no other.
 */
export function fixRounds(builder: ChangeBuilder, judge: TaskRow, failed: readonly RegistryEntry[], setup: FixRoundSetup): void {
  const byMaker = new Map<string, RegistryEntry[]>();
  for (const entry of failed) {
    const list = byMaker.get(entry.metadata.task_id) ?? [];
    if (!list.some((known) => known.artifact_id === entry.artifact_id)) list.push(entry);
    byMaker.set(entry.metadata.task_id, list);
  }
  for (const [makerId, entries] of byMaker) {
    const maker = builder.row(makerId);
    if (maker === undefined) continue;
    const root = rootOf(maker.id);
    const after = maker.id === judge.id ? maker.id : judge.id;
    const rows = builder.view();
    // Appended already by an earlier decision of this judge: that round is the one to run.
    if (rows.some((row) => row.id.startsWith(`${root}-fix-`) && splitList(row.deps).includes(after))) continue;
    const waiting = rows.filter(
      (row) => isPending(row) && row.id !== judge.id && (splitList(row.deps).includes(maker.id) || (after !== maker.id && splitList(row.deps).includes(after))),
    );
    const round = roundsOf(rows, root) + 1;
    const names = entries.map((entry) => entry.artifact_id).join(', ');
    const why = entries.map((entry) => `${entry.artifact_id}: ${entry.validation_summary || 'no summary given'}`).join('; ');
    if (round > setup.maxFixRounds) {
      const first = entries[0]!;
      const cause = rejectedCause(first.artifact_id, maker.id, `${first.validation_summary} (after ${setup.maxFixRounds} fix round(s), max_fix_rounds)`);
      builder.add({ add: [], update: [], skip: waiting.map((row) => ({ id: row.id, error: cause.error })) });
      continue;
    }
    const fix = newRow({
      id: `${root}-fix-${round}`,
      title: `Fix ${names} of ${maker.id} (round ${round})`,
      description:
        `Fix the artifact(s) ${names} that ${maker.id} made: they failed validation${after === maker.id ? '' : ` by ${judge.id}`} (${why}). ` +
        `Give a new manifest of each, with the same artifact_id, a new version and validation_status pending (or passed once checked).\n\n` +
        `The original task: ${maker.description}`,
      role: maker.role,
      deps: after,
      context_from: [...new Set([maker.id, after])].join(';'),
      priority: maker.priority,
    });
    const recheck =
      after === maker.id
        ? undefined
        : newRow({
            id: `${rootOf(judge.id)}-recheck-${round}`,
            title: `Check again: ${names} after ${fix.id}`,
            description: `Validate again the artifact(s) ${names} that ${fix.id} fixed (round ${round} of at most ${setup.maxFixRounds}), as ${judge.id} did: give artifact_validations for them.\n\nThe check: ${judge.description}`,
            role: judge.role,
            deps: fix.id,
            context_from: fix.id,
            exec_mode: judge.exec_mode === 'interactive' ? 'interactive' : 'csv-wave',
            priority: judge.priority,
          });
    const target = recheck ?? fix;
    builder.add({ add: recheck ? [fix, recheck] : [fix], update: [], skip: [] });
    for (const row of waiting) {
      const deps = splitList(row.deps).map((id) => (id === maker.id || id === after ? target.id : id));
      const context = splitList(row.context_from);
      for (const id of [fix.id, ...(recheck ? [recheck.id] : [])]) if (!context.includes(id)) context.push(id);
      builder.add({ add: [], update: [{ id: row.id, deps: [...new Set(deps)].join(';'), context_from: context.join(';') }], skip: [] });
    }
  }
}

/**
 * "pending → wait or prompt manual validation", made a dependency: a task that does not
 * validate and waits on artifacts still pending also depends on the validators of them
 * (the pending tasks of a validator role that depend on their maker), so that both
 * schedules run it after them. One that would make a cycle (the validator comes after the
 * task) is not added: the artifact gate still holds the task, and a stall says why.
 */
export function validationWaits(builder: ChangeBuilder, maker: TaskRow, validates: (row: TaskRow) => boolean): void {
  const rows = builder.view();
  const after = rows.filter((row) => isPending(row) && splitList(row.deps).includes(maker.id));
  const validators = after.filter(validates);
  if (validators.length === 0) return;
  for (const row of after) {
    if (validates(row)) continue;
    for (const validator of validators) {
      if (downstream(builder.view(), row.id).has(validator.id)) continue;
      builder.wire(row.id, validator.id, false);
    }
  }
}

/** The ids below `id` through deps, over the rows as they stand. */
function downstream(rows: readonly TaskRow[], id: string): Set<string> {
  const below = new Set<string>();
  const stack = [id];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    for (const row of rows) {
      if (!below.has(row.id) && splitList(row.deps).includes(next)) {
        below.add(row.id);
        stack.push(row.id);
      }
    }
  }
  return below;
}
