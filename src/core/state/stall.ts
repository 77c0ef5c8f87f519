import { splitList } from '../id-list.js';
import type { TaskRow } from '../task.js';

/** Which tasks wait, and on what: the message of a run that stalled. */
export function describeStall(waiting: readonly TaskRow[], byId: ReadonlyMap<string, TaskRow>): string {
  const lines = waiting.slice(0, 20).map((row) => {
    const on = [...new Set([...splitList(row.deps), ...splitList(row.context_from)])].filter((id) => {
      const upstream = byId.get(id);
      return upstream !== undefined && upstream.status !== 'completed' && upstream.status !== 'failed' && upstream.status !== 'skipped';
    });
    return `  ${row.id} waits on ${on.length > 0 ? on.join(', ') : '(nothing it can name)'}`;
  });
  const more = waiting.length > 20 ? `\n  … and ${waiting.length - 20} more` : '';
  return `Stalled: nothing can start, yet ${waiting.length} task(s) are not finished:\n${lines.join('\n')}${more}`;
}
