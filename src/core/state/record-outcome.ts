import type { CoreReply, RefusedChange } from '../effects.js';
import type { FinalStatus, TaskRow } from '../task.js';

/** Writes a finished task's outcome into its row; a task skipped or failed without a finished reply gets empty findings. */
export function recordOutcome(
  row: TaskRow,
  status: FinalStatus,
  reply: CoreReply | RefusedChange | undefined,
  error: string,
): void {
  row.status = status;
  row.findings = reply?.kind === 'finished' ? reply.findings : '';
  row.gc_signal = reply?.kind === 'finished' ? reply.gc_signal : '';
  row.severity_summary = reply?.kind === 'finished' ? reply.severity_summary : '';
  row.error = error;
  row.route = reply?.kind === 'finished' && status === 'completed' ? (reply.route ?? '') : '';
}
