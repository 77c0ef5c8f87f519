import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import type { FinishedReply, WorkerRequest } from '../../executors/messages.js';
import type { HandlerResult, InteractiveContext, InteractiveHandler } from '../../interactive/types.js';
import { kLayout, type SessionFileWriter } from '../../layout.js';
import { SettingsReader } from '../settings.js';
import {
  actionLabel,
  kQualityChoices,
  kQualityDimensions,
  parseQualityAction,
  qualityChanges,
  weakestDimension,
  type QualityAction,
  type QualityScores,
} from './quality-actions.js';
import { lifecycleSettings } from './settings.js';

/**
 * The quality gate (seed 003's spec phase gate, QUALITY-001): the reviewer's check runs
 * through the executor and scores the specification on five dimensions (a `quality_scores`
 * discovery); then the person chooses what follows, like the discussion gate: on the
 * terminal, from `--answers FILE`, or by `--auto` (resume when every score reaches
 * `quality_threshold`, else improve the weakest). The check of round `max_quality_rounds`
 * resumes without asking, which also ends an answers file that asks for rechecks without
 * end. `resume` validates every artifact upstream that waits for validation; each choice
 * goes to quality.md, the check's result file, its cells (gc_signal, severity_summary) and
 * the journal (the tasks it adds), and the run prints it as `[GATE] QUALITY-001: …`.
 */
export class QualityGate implements InteractiveHandler {
  async run(request: WorkerRequest, context: InteractiveContext): Promise<HandlerResult> {
    const checked = await context.runExecutor(request);
    if (checked.kind !== 'finished' || checked.status !== 'completed') return { reply: checked };

    const rows = context.rows;
    const gate = rows.find((row) => row.id === request.task.id)!;
    const round = qualityRound(rows, gate);
    const { topic, qualityThreshold, maxQualityRounds } = lifecycleSettings(SettingsReader.of('lifecycle', context.config));
    const scores = readScores(checked);
    const known = new Set(rows.map((row) => row.id));

    let action: QualityAction;
    let source: string;
    if (round >= maxQualityRounds) {
      action = { action: 'resume' };
      source = `the round limit, max_quality_rounds ${maxQualityRounds}`;
    } else if (context.answers.auto) {
      const low = kQualityDimensions.filter((dimension) => (scores[dimension] ?? 0) < qualityThreshold);
      action = low.length === 0 ? { action: 'resume' } : { action: 'improve', dimension: weakestDimension(scores) };
      source = context.answers.source ?? '--auto';
    } else {
      if (context.answers.answer === undefined) throw new Error(`${gate.id}: the answer source cannot answer the quality gate (${kQualityChoices})`);
      const question = `${gate.id} (quality round ${round}): ${scoreText(scores)} (threshold ${qualityThreshold}). What next?`;
      const text = await context.answers.answer(question, kQualityChoices, (answer) => {
        const parsed = parseQualityAction(answer, (id) => known.has(id));
        return 'problem' in parsed ? parsed.problem : undefined;
      });
      action = parseQualityAction(text, (id) => known.has(id)) as QualityAction;
      source = context.answers.source ?? 'the answer source';
    }

    // `improve` alone names the weakest dimension of this check.
    if (action.action === 'improve' && action.dimension === undefined) action = { action: 'improve', dimension: weakestDimension(scores) };
    const upstream = upstreamTasks(rows, gate);
    const artifacts = context.artifactsOf?.([...upstream]) ?? [];
    const changes = qualityChanges(
      { rows, gate, checked: splitList(gate.deps), round, scores, threshold: qualityThreshold, topic, artifacts },
      action,
    );
    const label = actionLabel(action);
    note(context.files, gate.id, round, scores, qualityThreshold, label, source);
    context.decided?.({ id: gate.id, round, label, source });
    // resume: the person's word validates what waits for it upstream.
    const validations =
      action.action === 'resume'
        ? artifacts
            .filter((artifact) => artifact.validation_status === 'pending')
            .map((artifact) => ({
              artifact_id: artifact.artifact_id,
              validation_status: 'passed' as const,
              validation_summary: `Passed at the quality gate ${gate.id} (round ${round}, resume from ${source})`,
            }))
        : [];
    const reply: FinishedReply = {
      ...checked,
      gc_signal: action.action.toUpperCase(),
      severity_summary: kQualityDimensions.map((dimension) => `${dimension}:${scores[dimension] ?? '-'}`).join(' '),
      ...(validations.length > 0 ? { validations: [...(checked.validations ?? []), ...validations] } : {}),
    };
    return { reply, changes, record: { round, action: label, scores, threshold: qualityThreshold, source } };
  }
}

/** A quality check's round: one more than the checks (interactive reviewer tasks) it follows. */
export function qualityRound(rows: readonly TaskRow[], gate: TaskRow): number {
  let earlier = 0;
  for (const id of upstreamTasks(rows, gate)) {
    const row = rows.find((candidate) => candidate.id === id);
    if (row !== undefined && row.role === gate.role && row.exec_mode === 'interactive') earlier++;
  }
  return earlier + 1;
}

/** Every task the gate depends on, directly or not. */
function upstreamTasks(rows: readonly TaskRow[], gate: TaskRow): Set<string> {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const seen = new Set<string>();
  const stack = splitList(gate.deps);
  for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...splitList(byId.get(id)?.deps ?? ''));
  }
  return seen;
}

/** The scores of the check's `quality_scores` discovery: numbers from 0 to 100; anything else is no score. */
export function readScores(reply: FinishedReply): QualityScores {
  const found = reply.discoveries.find((discovery) => discovery.type === 'quality_scores')?.data ?? {};
  const scores: QualityScores = {};
  for (const dimension of kQualityDimensions) {
    const value = found[dimension];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 100) scores[dimension] = value;
  }
  return scores;
}

function scoreText(scores: QualityScores): string {
  return kQualityDimensions.map((dimension) => `${dimension} ${scores[dimension] ?? 'no score'}`).join(', ');
}

/** A section of quality.md: the round's scores and the action chosen, with where it came from. */
function note(files: SessionFileWriter, id: string, round: number, scores: QualityScores, threshold: number, label: string, source: string): void {
  files.append(
    kLayout.quality,
    `### ${id} (round ${round}) - ${new Date().toISOString()}\n\nScores: ${scoreText(scores)} (threshold ${threshold})\n\nAction: ${label.replace(/\s+/g, ' ')} (from ${source})\n\n`,
  );
}
