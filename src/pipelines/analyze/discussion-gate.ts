import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import type { WorkerRequest } from '../../executors/messages.js';
import { kAnalyzeModes } from './decompose.js';
import { SettingsReader } from '../settings.js';
import { analyzeSettings } from './settings.js';
import { loopTasksBelow } from '../loop-tasks.js';
import { newRow } from '../new-row.js';
import { nextId } from '../task-ids.js';
import { statusOf, supersededCause } from '../../core/skip-cause.js';
import type { GateDecision, HandlerResult, InteractiveContext, InteractiveHandler, SessionChanges } from '../../interactive/types.js';
import { kLayout, type SessionFileWriter } from '../../layout.js';

/** A gate decision as a person reads it. */
const kLabels: Record<GateDecision['decision'], string> = { continue: 'Continue deeper', adjust: 'Adjust direction', done: 'Done' };

/** The roles of a discussion loop: the discussions and the supplementary analyses between them. */
const kLoopRoles = new Set(['discussant', 'analyst']);

/**
 * The `discussant` role (seed 002): the discussion round runs through the executor, then
 * the feedback gate decides what follows — unless the mode's round limit is reached.
 */
export class DiscussionGate implements InteractiveHandler {
  async run(request: WorkerRequest, context: InteractiveContext): Promise<HandlerResult> {
    const reply = await context.runExecutor(request);
    if (reply.kind !== 'finished' || reply.status !== 'completed') return { reply };

    const self = context.rows.find((row) => row.id === request.task.id)!;
    const round = discussionRound(context.rows, self);
    const { mode, topic } = analyzeSettings(SettingsReader.of('analyze', context.config));
    const maxRounds = kAnalyzeModes[mode];

    let decision: GateDecision;
    let source: string;
    if (round >= maxRounds) {
      decision = { decision: 'done' };
      source = `the round limit of ${mode} mode, ${maxRounds}`;
      note(context.files, round, `Round limit ${maxRounds} of ${mode} mode reached: on to synthesis`);
    } else {
      decision = await context.answers.decide(`Discussion round ${round} complete. What next?`);
      source = context.answers.source ?? 'the answer source';
      note(context.files, round, decision.focus ? `${kLabels[decision.decision]}: ${decision.focus}` : kLabels[decision.decision]);
    }
    context.decided?.({ id: self.id, round, label: kLabels[decision.decision], ...(decision.focus ? { focus: decision.focus } : {}), source });
    return {
      reply,
      changes: gateChanges(context.rows, self, round, decision, topic),
      record: { round, ...decision },
    };
  }
}

/** A discussion's round: one more than the discussions it follows (its ancestors through deps). */
export function discussionRound(rows: readonly TaskRow[], discussion: TaskRow): number {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const seen = new Set<string>();
  const stack = splitList(discussion.deps);
  let earlier = 0;
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    const row = byId.get(id);
    if (!row || seen.has(id)) continue;
    seen.add(id);
    if (row.role === 'discussant') earlier++;
    stack.push(...splitList(row.deps));
  }
  return earlier + 1;
}

/** A line of discussion.md for the round: what the gate decided, appended through the session's writer. */
function note(files: SessionFileWriter, round: number, text: string): void {
  files.append(kLayout.discussion, `### Round ${round} - ${new Date().toISOString()}\n\n${text}\n\n`);
}

/**
 * The tasks a gate decision adds, and the synthesizer pointed at the last discussion.
 * A discussion that decides again (a rerun, or a resume after a crash that came between
 * the rows being written and the discussion being recorded as finished) finds the tasks of
 * its earlier decision: the same choice keeps them; another one skips those not run yet
 * (and the loop below them) before adding its own.
 */
export function gateChanges(
  rows: readonly TaskRow[],
  discussion: TaskRow,
  round: number,
  decision: GateDecision,
  topic: string,
): SessionChanges {
  const followUps = rows.filter((row) => kLoopRoles.has(row.role) && splitList(row.deps).includes(discussion.id));
  if (followUps.some((row) => sameChoice(row, decision))) return { add: [], update: [], skip: [] };
  const superseded = [...followUps, ...loopTasksBelow(rows, kLoopRoles, followUps.map((row) => row.id))];
  // Downstream first (appended rows are in dependency order): a task skipped before its
  // dependents would doom them as failed.
  const skip = superseded
    .filter((row) => statusOf(row) === 'pending')
    .reverse()
    .map((row) => ({ id: row.id, error: supersededCause(discussion.id).error }));

  const ids = rows.map((row) => row.id);
  const add: TaskRow[] = [];
  let last = discussion.id;
  if (decision.decision !== 'done') {
    let before = discussion.id;
    if (decision.decision === 'adjust') {
      const fix = newRow({
        id: freeId(`ANALYZE-fix-${round}`, ids),
        title: 'Supplementary analysis with adjusted focus',
        description: `Re-analyze "${topic}" from the adjusted perspective: ${decision.focus}. Build on the previous exploration findings and give updated discussion points.`,
        role: 'analyst',
        angle: decision.focus ?? '',
        deps: discussion.id,
        context_from: discussion.id,
      });
      add.push(fix);
      before = fix.id;
    }
    const next = newRow({
      id: nextId('DISCUSS', ids),
      title: `Discussion round ${round + 1}`,
      description:
        decision.decision === 'adjust'
          ? `Process discussion round ${round + 1} (direction adjusted: ${decision.focus}): update the understanding of "${topic}" — confirmed, corrected, new insights, open questions.`
          : `Process discussion round ${round + 1} (deepen): investigate the open questions of "${topic}" deeper and update the understanding.`,
      role: 'discussant',
      deps: before,
      context_from: before === discussion.id ? discussion.id : `${discussion.id};${before}`,
      exec_mode: 'interactive',
    });
    add.push(next);
    last = next.id;
  }

  const synth = rows.find((row) => row.id === 'SYNTH-001');
  if (!synth) {
    add.push(
      newRow({
        id: 'SYNTH-001',
        title: 'Integrate all analysis into final conclusions',
        description: `Integrate every analysis and discussion of "${topic}" into final conclusions: an executive summary with recommendations.`,
        role: 'synthesizer',
        deps: last,
        context_from: last,
      }),
    );
    return { add, update: [], skip };
  }
  // A synthesis that already ran keeps its result (a rerun without cascade).
  if (statusOf(synth) !== 'pending') return { add, update: [], skip };
  const dropped = new Set(superseded.map((row) => row.id));
  const context = splitList(synth.context_from).filter((id) => !dropped.has(id));
  if (!context.includes(last)) context.push(last);
  return { add, update: [{ id: synth.id, deps: last, context_from: context.join(';') }], skip };
}

/** Whether a task an earlier decision added is what this decision would add first. */
function sameChoice(row: TaskRow, decision: GateDecision): boolean {
  if (decision.decision === 'continue') return row.role === 'discussant';
  if (decision.decision === 'adjust') return row.role === 'analyst' && row.angle === (decision.focus ?? '');
  return false;
}

/** `base` if no task has it, else `base-2`, `base-3`, … */
function freeId(base: string, ids: readonly string[]): string {
  if (!ids.includes(base)) return base;
  let n = 2;
  while (ids.includes(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}
