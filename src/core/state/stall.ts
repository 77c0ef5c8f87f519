import { splitList } from '../id-list.js';
import type { GateChange } from '../gates.js';
import type { TaskRow } from '../task.js';

/**
 * Which tasks wait, and on what: the message of a run that stalled. `gates` names the
 * dependencies whose artifacts hold a task at their gate (core/gates.ts): a stall that only
 * a validation can end says so.
 */
export function describeStall(
  waiting: readonly TaskRow[],
  byId: ReadonlyMap<string, TaskRow>,
  gates: (row: TaskRow) => readonly GateChange[] = () => [],
): string {
  let gated = 0;
  const lines = waiting.map((row) => {
    const held = gates(row);
    const on = [...new Set([...splitList(row.deps), ...splitList(row.context_from)])].filter((id) => {
      const upstream = byId.get(id);
      return upstream !== undefined && upstream.status !== 'completed' && upstream.status !== 'failed' && upstream.status !== 'skipped';
    });
    if (held.length > 0 && on.length === 0) {
      gated++;
      const artifacts = held.map(({ id, gate }) => `${id} (${gate})`).join(', ');
      return `  ${row.id} waits on a validation of the artifacts of ${artifacts}`;
    }
    return `  ${row.id} waits on ${on.length > 0 ? on.join(', ') : '(nothing it can name)'}`;
  });
  const shown = lines.slice(0, 20);
  const more = waiting.length > 20 ? `\n  … and ${waiting.length - 20} more` : '';
  const validation =
    gated === 0
      ? ''
      : `\nOnly a validation can end this: no task left validates those artifacts. A task of a validator role that depends on ` +
        `their task gives artifact_validations (or the quality gate resumes); until then the tasks after them wait.`;
  return `Stalled: nothing can start, yet ${waiting.length} task(s) are not finished:\n${shown.join('\n')}${more}${validation}`;
}
