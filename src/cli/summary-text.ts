import type { BatchProgressEvent, RunSummary, TaskInjectedEvent, TasksEditedEvent } from '../events/events.js';
import type { GateDecidedEvent } from '../interactive/types.js';
import { errorLine } from '../text/error-line.js';
import { formatDuration } from '../knowledge/context-report.js';
import { cacheText } from '../knowledge/cost-text.js';

/** A task that failed in this run, as the end-of-run summary lists it. */
export interface FailedTask {
  id: string;
  error: string;
}

/** Failures listed at the end; the rest are counted (`csv-wave status` shows them all). */
const kMaxListedFailures = 20;

/**
 * What a run prints when it ends, on a terminal or not: the tasks that failed in it, each
 * with its error (a long log or a live bar must not be the only place they show), then the
 * summary line and why the run stopped early, if it did.
 */
export function endOfRunText(summary: RunSummary, failures: readonly FailedTask[]): string {
  return `${failureList(failures)}${summaryLine(summary)}\n`;
}

function failureList(failures: readonly FailedTask[]): string {
  if (failures.length === 0) return '';
  const listed = failures.slice(0, kMaxListedFailures).map(({ id, error }) => `  ${id}: ${errorLine(error)}\n`);
  const more = failures.length > kMaxListedFailures ? `  … and ${failures.length - kMaxListedFailures} more\n` : '';
  return `Failed in this run (${failures.length}):\n${listed.join('')}${more}`;
}

/** What ran, not what was scheduled: `Ran 6 of 50 task(s)`, and the attempts when some were retried. */
function ranText({ ran, total, attempts, cache }: RunSummary): string {
  const tasks = ran === total ? `Ran ${ran} task(s)` : `Ran ${ran} of ${total} task(s)`;
  const more = [
    ...(attempts > ran ? [`${attempts} attempts`] : []),
    ...(cache === undefined ? [] : [cacheText(cache.tasks, cache.saved_usd)]),
  ];
  return more.length > 0 ? `${tasks} (${more.join('; ')})` : tasks;
}

export function summaryLine(summary: RunSummary): string {
  const { counts } = summary;
  const head = summary.total === 0 ? 'Nothing to run: every task is finished' : `${ranText(summary)} in ${formatDuration(summary.durationMs)}`;
  const tally = `completed ${counts.completed}, failed ${counts.failed}, skipped ${counts.skipped}, pending ${counts.pending}`;
  return `${head} (session: ${tally})${summary.reason === '' ? '' : `\n${summary.reason}`}`;
}

/** A batch's progress as the run shows it (`--batch`). */
export function batchProgressLine(event: BatchProgressEvent): string {
  return `[BATCH] ${event.batch} ${event.status}: ${event.completed} of ${event.total} answered, ${event.failed} failed\n`;
}

/** A gate's decision as a line of the run's output: `[GATE] DISCUSS-001: Continue deeper (from answers.json)`. */
export function gateLine(event: GateDecidedEvent): string {
  return `[GATE] ${event.id}: ${event.label}${event.focus === undefined ? '' : `: ${event.focus.replace(/\s+/g, ' ').trim()}`} (from ${event.source})\n`;
}

/** A task an injection rule added, as a line of the run's output: `[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP"`. */
export function injectLine(event: TaskInjectedEvent): string {
  return `[INJECT] ${event.id} ${event.placement}: ${event.reason}\n`;
}

/** Ids named on an `[EDIT]` line; the rest are counted. */
const kEditIds = 10;

/**
 * A save of tasks.csv merged during the run, as a line of its output:
 * `[EDIT] tasks.csv saved during the run: changed IDEA-003; added NEW-1; removed OLD-2`.
 * What it kept or left out follows as warnings.
 */
export function editLine(event: TasksEditedEvent): string {
  const ids = (list: readonly string[]) => `${list.slice(0, kEditIds).join(', ')}${list.length > kEditIds ? ` and ${list.length - kEditIds} more` : ''}`;
  const parts = [
    ...(event.changed.length > 0 ? [`changed ${ids(event.changed)}`] : []),
    ...(event.added.length > 0 ? [`added ${ids(event.added)}`] : []),
    ...(event.removed.length > 0 ? [`removed ${ids(event.removed)}`] : []),
  ];
  const taken = parts.length > 0 ? parts.join('; ') : 'nothing to take';
  const kept = event.notices.length > 0 ? ` (${event.notices.length} warning(s) on what the run kept)` : '';
  return `[EDIT] ${event.file} saved during the run: ${taken}${kept}\n`;
}
