import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import type { SessionChanges } from '../../interactive/types.js';
import { loopTasksBelow } from '../loop-tasks.js';
import { newRow } from '../new-row.js';
import { nextId } from '../task-ids.js';
import { kBrainstormText } from './decompose.js';

/**
 * The next generator-critic round after a GC check asked for revision: a challenge of the
 * revised ideas, a GC check of that challenge, and the next revision; the synthesizer is
 * moved from the old revision to the new one and reads the new challenge (DESIGN.md section 6).
 */
export function nextGcRound(rows: readonly TaskRow[], gcCheck: TaskRow): SessionChanges {
  const ids = rows.map((row) => row.id);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const challenger = splitList(gcCheck.deps).map((id) => byId.get(id)).find((row) => row?.role === 'challenger');
  const revisions = revisionsOf(rows, gcCheck);
  const round = (row: TaskRow | undefined) => String(Number(row?.gc_round || '0') + 1);
  // One numbering, the seed's: a task's gc_round is the GC round of the ideas it works on,
  // and its title says the same number (the challenge of the round-1 revision is round 1).
  const challengeRound = round(challenger);

  const challenge = newRow({
    id: nextId('CHALLENGE', ids),
    title: `${kBrainstormText.challengeTitle} (GC Round ${challengeRound})`,
    description: kBrainstormText.challenge,
    role: 'challenger',
    gc_round: challengeRound,
    deps: revisions.map((row) => row.id).join(';'),
    context_from: revisions.map((row) => row.id).join(';'),
  });
  const check = newRow({
    id: nextId('GC-CHECK', ids),
    title: kBrainstormText.gcTitle,
    description: kBrainstormText.gc,
    role: 'gc-controller',
    gc_round: round(gcCheck),
    deps: challenge.id,
    context_from: challenge.id,
    exec_mode: 'interactive',
  });
  const revision = newRow({
    id: nextId('IDEA', ids),
    title: kBrainstormText.reviseTitle(Number(round(gcCheck))),
    description: kBrainstormText.revise,
    role: 'ideator',
    gc_round: round(revisions[0] ?? gcCheck),
    deps: check.id,
    context_from: challenge.id,
  });

  const oldIds = new Set(revisions.map((row) => row.id));
  const update: SessionChanges['update'] = [];
  for (const row of rows) {
    if (row.role !== 'synthesizer' || !splitList(row.deps).some((id) => oldIds.has(id))) continue;
    const deps = splitList(row.deps).map((id) => (oldIds.has(id) ? revision.id : id));
    // The synthesizer reads every challenge of the rounds that ran, not only the first.
    const context = splitList(row.context_from);
    for (const id of [challenge.id, revision.id]) if (!context.includes(id)) context.push(id);
    update.push({ id: row.id, deps: [...new Set(deps)].join(';'), context_from: context.join(';') });
  }
  return { add: [challenge, check, revision], update, skip: [] };
}

/** The revision tasks a GC check guards: the ideators that depend on it. */
function revisionsOf(rows: readonly TaskRow[], gcCheck: TaskRow): TaskRow[] {
  return rows.filter((row) => row.role === 'ideator' && splitList(row.deps).includes(gcCheck.id));
}

const kLoopRoles = new Set(['ideator', 'challenger', 'gc-controller']);

/**
 * The rounds an earlier REVISION_NEEDED decision of this GC check appended: every
 * generator-critic task below its revisions. Empty the first time a check decides; not
 * empty when it decides again (a rerun, or a resume after a crash that came between the
 * rows being written and the check being recorded as finished).
 */
export function laterGcRounds(rows: readonly TaskRow[], gcCheck: TaskRow): TaskRow[] {
  return loopTasksBelow(rows, kLoopRoles, revisionsOf(rows, gcCheck).map((row) => row.id));
}
