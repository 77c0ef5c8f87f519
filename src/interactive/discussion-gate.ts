import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitList } from '../csv/columns.js';
import type { TaskRow } from '../csv/tasks-file.js';
import type { WorkerRequest } from '../executors/messages.js';
import { kAnalyzeModes, type AnalyzeMode } from '../pipelines/analyze/decompose.js';
import { newRow } from '../pipelines/new-row.js';
import { nextId } from '../pipelines/task-ids.js';
import type { GateDecision, HandlerResult, InteractiveContext, InteractiveHandler, SessionChanges } from './types.js';

/**
 * The `discussant` role (seed 002): the discussion round runs through the executor, then
 * the feedback gate decides what follows — unless the mode's round limit is reached.
 */
export class DiscussionGate implements InteractiveHandler {
  async run(request: WorkerRequest, context: InteractiveContext): Promise<HandlerResult> {
    const reply = await context.runExecutor(request);
    if (reply.kind !== 'finished' || reply.status !== 'completed') return { reply };

    const discussions = context.rows.filter((row) => row.role === 'discussant');
    const round = discussions.filter((row) => row.status === 'completed').length + 1;
    const mode = (context.config.mode ?? 'standard') as AnalyzeMode;
    const maxRounds = kAnalyzeModes[mode] ?? kAnalyzeModes.standard;
    const self = context.rows.find((row) => row.id === request.task.id)!;

    let decision: GateDecision;
    if (round >= maxRounds) {
      decision = { decision: 'done' };
      note(context.sessionDir, round, `Round limit ${maxRounds} of ${mode} mode reached: on to synthesis`);
    } else {
      decision = await context.answers.decide(`Discussion round ${round} complete. What next?`);
      const label = { continue: 'Continue deeper', adjust: 'Adjust direction', done: 'Done' }[decision.decision];
      note(context.sessionDir, round, decision.focus ? `${label}: ${decision.focus}` : label);
    }
    return { reply, changes: gateChanges(context.rows, self, round, decision, context.config.topic ?? '') };
  }
}

function note(sessionDir: string, round: number, text: string): void {
  appendFileSync(join(sessionDir, 'discussion.md'), `### Round ${round} - ${new Date().toISOString()}\n\n${text}\n\n`);
}

/** The tasks a gate decision adds, and the synthesizer pointed at the last discussion. */
export function gateChanges(
  rows: readonly TaskRow[],
  discussion: TaskRow,
  round: number,
  decision: GateDecision,
  topic: string,
): SessionChanges {
  const ids = rows.map((row) => row.id);
  const add: TaskRow[] = [];
  let last = discussion.id;
  if (decision.decision !== 'done') {
    let before = discussion.id;
    if (decision.decision === 'adjust') {
      const fix = newRow({
        id: `ANALYZE-fix-${round}`,
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
    return { add, update: [], skip: [] };
  }
  const context = splitList(synth.context_from);
  if (!context.includes(last)) context.push(last);
  return { add, update: [{ id: synth.id, deps: last, context_from: context.join(';') }], skip: [] };
}
