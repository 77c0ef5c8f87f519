import { splitList } from '../../core/id-list.js';
import { supersededCause, statusOf } from '../../core/skip-cause.js';
import type { TaskRow } from '../../core/task.js';
import type { SessionChanges } from '../../interactive/types.js';
import { newRow } from '../new-row.js';
import { revisionRow } from '../revision-row.js';
import { nextId } from '../task-ids.js';

/** The quality dimensions of seed 003's spec phase gate, each scored 0 to 100. */
export const kQualityDimensions = ['completeness', 'consistency', 'traceability', 'depth', 'coverage'] as const;
export type QualityDimension = (typeof kQualityDimensions)[number];
export type QualityScores = Partial<Record<QualityDimension, number>>;

/** What a person may answer at the quality gate (seed 003's user commands). */
export type QualityAction =
  /** Go on: the artifacts the gate checked are validated, and what waits on it runs. */
  | { action: 'resume' }
  /** An IMPROVE task for the named (or the weakest) dimension, then a recheck. */
  | { action: 'improve'; dimension?: QualityDimension }
  /** A revision of one task with the feedback, as `csv-wave revise` makes it, then a recheck. */
  | { action: 'revise'; task: string; feedback: string }
  /** The quality check again. */
  | { action: 'recheck' }
  /** A revision of what the feedback names (tasks or artifacts; else every task checked), then a recheck. */
  | { action: 'feedback'; text: string };

/** Characters of one answer at most. */
const kMaxActionChars = 16_000;

/** The actions, as the gate's question lists them. */
export const kQualityChoices = 'resume | improve [dimension] | revise <TASK-ID> <feedback> | recheck | feedback <text>';

/** A text's action, or why it is none. `known` tells a task id of the session. */
export function parseQualityAction(text: string, known: (id: string) => boolean): QualityAction | { problem: string } {
  const trimmed = text.trim();
  // A revision's description holds the feedback, and a cell at most 32,767 characters.
  if (trimmed.length > kMaxActionChars) return { problem: `${trimmed.length} characters, past the ${kMaxActionChars} an answer may have: put long feedback in a file the task reads` };
  const [word = '', ...rest] = trimmed.split(/\s+/);
  const tail = trimmed.slice(word.length).trim();
  switch (word.toLowerCase()) {
    case 'resume':
    case 'continue':
      return rest.length === 0 ? { action: 'resume' } : { problem: 'resume takes nothing after it' };
    case 'recheck':
      return rest.length === 0 ? { action: 'recheck' } : { problem: 'recheck takes nothing after it' };
    case 'improve': {
      if (tail === '') return { action: 'improve' };
      const dimension = tail.toLowerCase();
      if (!(kQualityDimensions as readonly string[]).includes(dimension)) {
        return { problem: `improve takes a dimension: ${kQualityDimensions.join(', ')} (or none: the weakest), not ${JSON.stringify(tail.slice(0, 40))}` };
      }
      return { action: 'improve', dimension: dimension as QualityDimension };
    }
    case 'revise': {
      const [task = '', ...feedback] = rest;
      if (task === '') return { problem: 'revise needs a task id and the feedback: revise DRAFT-002 add acceptance criteria' };
      if (!known(task)) return { problem: `revise: no task ${JSON.stringify(task.slice(0, 64))} in the session` };
      if (feedback.length === 0) return { problem: `revise ${task} needs the feedback after the id` };
      return { action: 'revise', task, feedback: tail.slice(task.length).trim() };
    }
    case 'feedback':
      return tail === '' ? { problem: 'feedback needs the text after it' } : { action: 'feedback', text: tail };
    default:
      return { problem: `${JSON.stringify(trimmed.slice(0, 60))} is none of: ${kQualityChoices}` };
  }
}

/** The action as the run's output and quality.md say it: `improve traceability`, `revise DRAFT-002`. */
export function actionLabel(action: QualityAction): string {
  switch (action.action) {
    case 'improve':
      return `improve ${action.dimension ?? ''}`.trim();
    case 'revise':
      return `revise ${action.task}: ${action.feedback}`;
    case 'feedback':
      return `feedback: ${action.text}`;
    default:
      return action.action;
  }
}

/** The dimension with the lowest score (a missing score counts as 0), the first in the seed's order on a tie. */
export function weakestDimension(scores: QualityScores): QualityDimension {
  let weakest: QualityDimension = kQualityDimensions[0];
  for (const dimension of kQualityDimensions) if ((scores[dimension] ?? 0) < (scores[weakest] ?? 0)) weakest = dimension;
  return weakest;
}

/** What the gate's decision works on: its own row, the tasks it checked, its round. */
export interface GateSpot {
  rows: readonly TaskRow[];
  gate: TaskRow;
  /** The tasks the check read (its deps). */
  checked: readonly string[];
  round: number;
  scores: QualityScores;
  threshold: number;
  topic: string;
  /** Artifact ids and the tasks that made them, for feedback that names an artifact. */
  artifacts: readonly { artifact_id: string; task: string }[];
}

/**
 * The tasks an action adds, and the rewiring of what waited on the gate (and, for a
 * revision, on the revised task, as `csv-wave revise` rewires it). Each task it adds has
 * the gate's round as gc_round and its title starts with `Quality round <n>: <action>`: a
 * gate that decides again (a resume after a kill between its tasks being journaled and its
 * finish) finds them; the same action keeps them, another one skips those not run yet.
 */
export function qualityChanges(spot: GateSpot, action: QualityAction): SessionChanges {
  const { rows, gate, round } = spot;
  const prefix = `Quality round ${round}: `;
  const below = downstreamOf(rows, gate.id);
  const earlier = rows.filter((row) => row.gc_round === String(round) && below.has(row.id) && row.title.startsWith(prefix));
  if (earlier.length > 0 && earlier.every((row) => row.title.startsWith(`${prefix}${shortLabel(action)}`))) return { add: [], update: [], skip: [] };
  const superseded = new Set(earlier.filter((row) => statusOf(row) === 'pending').map((row) => row.id));
  const skip = [...superseded].reverse().map((id) => ({ id, error: supersededCause(gate.id).error }));
  if (action.action === 'resume') {
    return { add: [], update: rewire(rows, [gate.id, ...superseded], undefined, superseded), skip };
  }
  const ids = rows.map((row) => row.id);
  const add: TaskRow[] = [];
  const stamp = (row: TaskRow, what: string) => {
    row.gc_round = String(round);
    row.title = `${prefix}${shortLabel(action)}${what}`;
    ids.push(row.id);
    add.push(row);
    return row;
  };
  const revised = new Map<string, string>();
  let before = gate.id;
  if (action.action === 'improve') {
    const dimension = action.dimension ?? weakestDimension(spot.scores);
    const score = spot.scores[dimension];
    const improve = newRow({
      id: nextId('IMPROVE', ids),
      description:
        `Improve the ${dimension} of the specification of "${spot.topic}" (${spot.checked.join(', ')}): ${gate.id} scored it ` +
        `${score ?? 'without a score'} of 100 (threshold ${spot.threshold}). Give new manifests for the artifacts you change: the same artifact_id, a new version, validation_status pending.`,
      role: 'reviewer',
      deps: gate.id,
      context_from: [...spot.checked, gate.id].join(';'),
      priority: gate.priority,
    });
    before = stamp(improve, '').id;
  } else if (action.action === 'revise' || action.action === 'feedback') {
    const targets = action.action === 'revise' ? [action.task] : feedbackTargets(spot, action.text);
    const feedback = action.action === 'revise' ? action.feedback : action.text;
    const made: string[] = [];
    for (const id of targets) {
      const original = rows.find((row) => row.id === id)!;
      const revision = revisionRow(original, feedback, ids);
      // After the gate, not the revised task: its artifacts wait for a validation, which holds back any task but a validator.
      revision.deps = gate.id;
      revision.context_from = [...new Set([id, gate.id])].join(';');
      stamp(revision, action.action === 'revise' ? '' : ` (${id})`);
      revised.set(id, revision.id);
      made.push(revision.id);
    }
    before = made.join(';');
  }
  const recheck = newRow({
    id: nextId('QUALITY', ids),
    description: gate.description,
    role: gate.role,
    deps: before,
    context_from: [...new Set([...spot.checked.map((id) => revised.get(id) ?? id), ...splitList(before)])].filter((id) => id !== gate.id).join(';') || before,
    exec_mode: 'interactive',
    priority: gate.priority,
  });
  stamp(recheck, ' (check again)');
  return { add, update: rewire(rows, [gate.id, ...superseded], recheck.id, superseded, revised), skip };
}

/** The first word of an action (the part a title keeps): `improve`, `revise`, … */
function shortLabel(action: QualityAction): string {
  return action.action === 'improve' ? `improve ${action.dimension ?? 'weakest'}` : action.action === 'revise' ? `revise ${action.task}` : action.action;
}

/**
 * The pending tasks that waited on the gate (or on a task a superseded decision added) now
 * wait on `target` (none: the gate itself stays, a resume), and those that waited on a
 * revised task on its revision, reading it too.
 */
function rewire(
  rows: readonly TaskRow[],
  from: readonly string[],
  target: string | undefined,
  dropped: ReadonlySet<string>,
  revised: ReadonlyMap<string, string> = new Map(),
): SessionChanges['update'] {
  const waitedOn = new Set(from);
  const update: SessionChanges['update'] = [];
  for (const row of rows) {
    if (statusOf(row) !== 'pending' || dropped.has(row.id) || from.includes(row.id) || row.title.startsWith('Quality round ')) continue;
    const deps = splitList(row.deps);
    if (!deps.some((id) => waitedOn.has(id) || revised.has(id))) continue;
    const next = deps.flatMap((id) => {
      if (revised.has(id)) return [revised.get(id)!];
      if (!waitedOn.has(id)) return [id];
      return target === undefined ? (dropped.has(id) ? [] : [id]) : [target];
    });
    const context = splitList(row.context_from).filter((id) => !dropped.has(id));
    for (const id of [...revised.values(), ...(target === undefined ? [] : [target])]) if (!context.includes(id)) context.push(id);
    const newDeps = [...new Set(next)].join(';');
    const newContext = context.join(';');
    if (newDeps !== row.deps || newContext !== row.context_from) update.push({ id: row.id, deps: newDeps, context_from: newContext });
  }
  return update;
}

/** The tasks a feedback text names: task ids, else artifacts (their makers), else every task the gate checked. */
function feedbackTargets(spot: GateSpot, text: string): string[] {
  const words = new Set(text.split(/[^A-Za-z0-9._-]+/).filter((word) => word !== ''));
  const checkedOrUpstream = new Set(spot.checked);
  const named = spot.rows.filter((row) => words.has(row.id) && checkedOrUpstream.has(row.id)).map((row) => row.id);
  if (named.length > 0) return named;
  const makers = spot.artifacts.filter((artifact) => words.has(artifact.artifact_id) && checkedOrUpstream.has(artifact.task)).map((artifact) => artifact.task);
  if (makers.length > 0) return [...new Set(makers)];
  return [...spot.checked];
}

/** The tasks below `id` through deps. */
function downstreamOf(rows: readonly TaskRow[], id: string): Set<string> {
  const below = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.id)) continue;
      if (splitList(row.deps).some((dep) => dep === id || below.has(dep))) {
        below.add(row.id);
        grew = true;
      }
    }
  }
  return below;
}
