import { splitList } from '../core/id-list.js';
import { cellOf, type TasksTable } from '../csv/tasks-table.js';
import type { TaskRow } from '../core/task.js';
import { kTaskStatuses, type TaskStatus } from '../schema/row.js';
import { satisfiesDependents, statusOf } from '../core/skip-cause.js';
import { errorLine } from '../text/error-line.js';
import type { Session } from '../session/session.js';
import { keySessionOf } from '../cache/session-keys.js';
import type { AttemptLine } from '../schema/attempt.js';
import { recordedKeys, staleTasks } from '../cache/stale.js';
import { CacheStore } from '../cache/cache-store.js';
import { CacheFolder } from '../session/files/cache-folder.js';
import { oneLine } from '../text/one-line.js';

export interface TaskLine {
  /**
   * `[????]` marks a status cell outside the enum: status shows files that would not
   * validate. `[QUEUED]`: a task out whose job waits in the queue for a worker (--backend
   * bullmq), which only Redis knows: the status command sets it on a `[RUN]` line.
   */
  tag: '[DONE]' | '[STALE]' | '[RUN]' | '[QUEUED]' | '[INTR]' | '[WAIT]' | '[FAIL]' | '[SKIP]' | '[----]' | '[????]';
  id: string;
  role: string;
  /** What follows the arrow: findings, error, what blocks the task, or `ready`. */
  detail: string;
}

const kDetailLength = 60;

/**
 * One line per task, in the style of the seed's pipeline status (seed 002, handleCheck).
 * `running` is false when no run holds the session's lock: its `in_progress` tasks were
 * left so by a run that was killed, and show as interrupted.
 */
export function taskLines(table: TasksTable, running: boolean, stale: ReadonlyMap<string, readonly string[]> = new Map()): TaskLine[] {
  const byId = new Map(table.rows.map((row) => [row.id, row]));
  return table.rows.map((row) => {
    const line = (tag: TaskLine['tag'], detail: string): TaskLine => ({
      tag,
      id: row.id,
      role: row.role,
      detail: oneLine(detail, kDetailLength),
    });
    // An error is shown by its whole first line, never cut inside a word.
    const errorOf = (tag: TaskLine['tag']): TaskLine => ({ tag, id: row.id, role: row.role, detail: errorLine(row.error) });
    if (!hasKnownStatus(row)) return line('[????]', `invalid status: ${row.status}`);
    switch (statusOf(row)) {
      case 'completed': {
        // What changed is said whole: it is what a person acts on.
        const changes = stale.get(row.id);
        return changes === undefined ? line('[DONE]', row.findings) : { tag: '[STALE]', id: row.id, role: row.role, detail: changes.join('; ') };
      }
      case 'in_progress':
        return running ? line('[RUN]', 'running') : line('[INTR]', 'interrupted: no run holds the lock; resume runs it again');
      case 'failed':
        return errorOf('[FAIL]');
      case 'skipped':
        return errorOf('[SKIP]');
      case 'pending': {
        const blockers = blockersOf(row, byId);
        return blockers.length > 0 ? line('[WAIT]', `blocked by ${blockers.join(', ')}`) : line('[----]', 'ready');
      }
    }
  });
}

function blockersOf(row: TaskRow, byId: Map<string, TaskRow>): string[] {
  return splitList(row.deps).filter((dep) => {
    const upstream = byId.get(dep);
    return upstream !== undefined && !satisfiesDependents(upstream);
  });
}

/** Tasks per status; a row whose status cell is outside the enum counts in none of them. */
export function countByStatus(rows: readonly TaskRow[]): Record<TaskStatus, number> {
  const counts = Object.fromEntries(kTaskStatuses.map((status) => [status, 0])) as Record<TaskStatus, number>;
  for (const row of rows) if (hasKnownStatus(row)) counts[statusOf(row)]++;
  return counts;
}

const kKnownStatuses = new Set<string>(kTaskStatuses);

/** False for a status cell a person mistyped (`done`, `Completed`): validation reports it, status shows it. */
export function hasKnownStatus(row: TaskRow): boolean {
  return row.status === '' || kKnownStatuses.has(row.status);
}

/** Per wave: how many tasks, and how many of each status. */
export function countByWave(table: TasksTable, waves: Map<string, number>): Map<number, Record<TaskStatus, number>> {
  const grouped = new Map<number, TaskRow[]>();
  for (const row of table.rows) {
    const wave = waves.get(row.id) ?? 0;
    const list = grouped.get(wave);
    if (list) list.push(row);
    else grouped.set(wave, [row]);
  }
  const result = new Map<number, Record<TaskStatus, number>>();
  for (const wave of [...grouped.keys()].sort((a, b) => a - b)) result.set(wave, countByStatus(grouped.get(wave)!));
  return result;
}

/** A row as `status --json` shows it: every column by name, cells as the task produced them. */
export function rowObject(table: TasksTable, row: TaskRow): Record<string, string> {
  // Defined, not assigned: a column named `__proto__` is a key like any other.
  const object: Record<string, string> = {};
  for (const column of table.columns) Object.defineProperty(object, column, { value: cellOf(row, column), enumerable: true, writable: true, configurable: true });
  return object;
}

/**
 * The stale tasks of a session as `status` shows them (docs/cache.md): keys computed with
 * what the last run ran with (`.csv-wave/last-run.json`), else session.json's executor;
 * none when neither names one, or the session's settings do not read.
 */
export function staleInSession(session: Session, rows: readonly TaskRow[], lines: readonly AttemptLine[], warn: (message: string) => void): Map<string, string[]> {
  const recorded = recordedKeys(lines);
  if (recorded.size === 0) return new Map();
  const keyed = keySessionOf(session, rows);
  if (keyed === undefined) return new Map();
  const store = new CacheStore(CacheFolder.of(session.dir, session.config.cache_dir), warn);
  const stale = staleTasks(keyed.session, keyed.run, recorded, store);
  return new Map(stale.map((task) => [task.id, task.changes]));
}
