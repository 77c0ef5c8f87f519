import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import type { WorkerRequest } from '../../executors/messages.js';
import { convergedCause, statusOf } from '../../core/skip-cause.js';
import { laterGcRounds, nextGcRound } from './gc-round.js';
import { parseSeverity, signalFromSeverity } from '../../roles/severity.js';
import type { HandlerResult, InteractiveContext, InteractiveHandler, SessionChanges } from '../../interactive/types.js';
import { SettingsReader } from '../settings.js';
import { brainstormSettings } from './settings.js';

export type GcDecision = 'REVISION_NEEDED' | 'CONVERGED';

/**
 * The generator-critic decision (DESIGN.md section 6): REVISION_NEEDED when the challenger
 * found CRITICAL or HIGH issues and the round limit is not reached; CONVERGED otherwise,
 * including when the challenger left no data.
 */
export function decideGc(challengerSignal: string, severitySummary: string, gcRound: number, maxRounds: number): {
  decision: GcDecision;
  note: string;
} {
  const signal = challengerSignal.trim().toUpperCase() || signalFromSeverity(severitySummary);
  if (signal !== 'REVISION_NEEDED') {
    return { decision: 'CONVERGED', note: signal === '' ? 'no severity data from the challenger' : severitySummary };
  }
  if (gcRound >= maxRounds) {
    return { decision: 'CONVERGED', note: `round limit ${maxRounds} reached; ${severitySummary || 'revision was asked'}` };
  }
  return { decision: 'REVISION_NEEDED', note: severitySummary || 'the challenger asked for revision' };
}

/** The `gc-controller` role: decides, records the decision, and changes the session to match. */
export class GcController implements InteractiveHandler {
  async run(request: WorkerRequest, context: InteractiveContext): Promise<HandlerResult> {
    const byId = new Map(context.rows.map((row) => [row.id, row]));
    const self = byId.get(request.task.id)!;
    const upstream = splitList(self.deps).map((id) => byId.get(id)!);
    const challenger = upstream.find((row) => row.role === 'challenger') ?? upstream[0];
    const gcRound = Number(self.gc_round || '0');
    const { maxGcRounds: maxRounds } = brainstormSettings(SettingsReader.of('brainstorm', context.config));
    const severity = challenger?.severity_summary ?? '';
    const { decision, note } = decideGc(challenger?.gc_signal ?? '', severity, gcRound, maxRounds);

    const changes = gcChanges(context.rows, self, decision);
    return {
      reply: {
        kind: 'finished',
        status: 'completed',
        findings: `GC decision: ${decision} (${note})`,
        gc_signal: decision,
        severity_summary: severity,
        error: '',
        discoveries: [
          { type: 'gc_decision', data: { round: gcRound, signal: decision, severity_counts: parseSeverity(severity) ?? {} } },
        ],
        wisdom: { decisions: [`GC round ${gcRound}: ${decision} (${note})`] },
        artifacts: [],
        supervision_verdict: undefined,
        supervision_score: undefined,
      },
      changes,
      record: { gc_decision: decision, gc_round: gcRound },
    };
  }
}

/**
 * What a decision changes. REVISION_NEEDED appends the next round, unless an earlier
 * decision of this check appended it already: then that round is the one to run.
 * CONVERGED skips the check's pending dependents, and any round appended below them.
 */
function gcChanges(rows: readonly TaskRow[], check: TaskRow, decision: GcDecision): SessionChanges {
  const later = laterGcRounds(rows, check);
  if (decision === 'REVISION_NEEDED') return later.length > 0 ? { add: [], update: [], skip: [] } : nextGcRound(rows, check);
  const pending = (row: TaskRow) => statusOf(row) === 'pending';
  const skipped = [...rows.filter((row) => splitList(row.deps).includes(check.id)), ...later].filter(pending);
  return {
    add: [],
    update: [],
    skip: [...new Set(skipped)].map((row) => ({ id: row.id, error: convergedCause(check.id).error })),
  };
}
