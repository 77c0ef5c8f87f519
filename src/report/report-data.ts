import { basename, join } from 'node:path';
import { cellReader, type TasksTable } from '../csv/tasks-table.js';
import { countByStatus } from '../commands/status-report.js';
import { cachedShareText, cacheText, costSummary, costText, failedSpendText } from '../knowledge/cost-text.js';
import { readDiscoveries } from '../knowledge/discoveries-board.js';
import type { PriceTable } from '../knowledge/pricing.js';
import { readUsage, usageOfTasks, type UsageSum, type UsageTotals } from '../knowledge/usage.js';
import type { TaskRow } from '../core/task.js';
import type { AttemptEnd } from '../schema/attempt.js';
import type { TaskStatus } from '../schema/row.js';
import { listArtifacts } from './artifact-files.js';
import { groupFailures, type FailureGroup } from './failures.js';
import { AttemptLinesReader, cachedResults, type AttemptBrief, type CachedResults } from '../knowledge/attempt-lines.js';
import { WaveContexts } from './wave-contexts.js';
import { kLayout } from '../layout.js';

/**
 * A task as the page shows it: [id, title, role, wave, status, findings, error, deps,
 * exec_mode ('' for csv-wave), description]. Arrays keep 100,000 tasks small.
 */
export type ReportTask = [string, string, string, number, string, string, string, string, string, string];

/** An attempt: [task index, attempt, start (ms after the first), duration ms, outcome, error class, thread, run index]. */
export type ReportAttempt = [number, number, number, number, AttemptEnd, string, number | null, number];

/** The columns a ReportTask holds; the page reads any other column from its `cells`. */
const kTaskFields = new Set(['id', 'title', 'role', 'wave', 'status', 'findings', 'error', 'deps', 'exec_mode', 'description']);

/**
 * A column of tasks.csv as the task table shows it. `cells` (one per task) only for a column
 * a ReportTask does not hold: the person's own columns, and angle, gc_signal and the like.
 */
export interface ReportColumn {
  name: string;
  cells?: string[];
}

/** What a click on a task shows beyond its row; only tasks with any of it have one, with only the fields they have. */
export interface TaskDetail {
  prev_context?: string;
  /** The task's model and agent requests, from usage.ndjson. */
  usage?: ReportUsage;
  discoveries?: { type: string; data: unknown }[];
  artifacts?: string[];
}

/**
 * Tokens and cost from usage.ndjson, counted by readUsage as status and context.md count them.
 * A line's cost is its own (the CLI reported one, or the run that wrote it knew the model's
 * price), else its model's price in the pricing the report was built with; `unpriced`
 * counts the requests without either, so that a cost is never shown as complete when it is not.
 */
export interface ReportUsage {
  requests: number;
  prompt: number;
  cached: number;
  completion: number;
  cost_usd: number;
  unpriced: number;
  /** The cost as context.md and status say it (knowledge/cost-text.ts): `$0.0042`, `unknown`, … */
  cost_text: string;
}

/** Everything report.html shows, embedded in it as JSON. */
export interface ReportData {
  version: 2;
  session: string;
  generated: string;
  /** True when `csv-wave serve` sends updates. */
  live: boolean;
  /**
   * `serve` only: which change of the session's files this data shows (1 for the first the
   * server read). The server's change notices carry the number of the latest; the page
   * fetches `/data` when it is not its own.
   */
  generation?: number;
  counts: Record<TaskStatus, number>;
  waveCount: number;
  /** From the first start to the last end of the attempts of the latest run. */
  wallMs: number;
  retries: number;
  /** The session's model and agent requests, from usage.ndjson; null when none was made. */
  tokens: ReportUsage | null;
  /**
   * The completed tasks whose result came from the result cache, what those results had
   * cost, and that as status says it (cacheText); null when none did.
   */
  cache: (CachedResults & { text: string }) | null;
  /** The session's cost as status and context.md say it (costSummary); null when no request was made. */
  cost: string | null;
  /** The prompt tokens served from the provider's cache, as status and context.md say it (cachedShareText); null when no prompt token was reported. */
  promptCache: string | null;
  /** What the tasks that failed spent (`8,948 tokens on tasks that failed ($0.012)`); null when they made no request. */
  failedSpend: string | null;
  /**
   * The columns of tasks.csv in file order, but those empty in every task (id and status are
   * always there): the spreadsheet is the person's schema, and the task table shows it.
   */
  columns: ReportColumn[];
  /** ISO time of the first attempt: attempt starts count from it. */
  t0: string;
  runs: string[];
  tasks: ReportTask[];
  attempts: ReportAttempt[];
  failures: FailureGroup[];
  details: Record<string, TaskDetail>;
}

/** prev_context shown per task at most: the wave file has all of it. */
const kMaxPrevContextChars = 2000;

/** The report of a session from its rows (in memory during a run, read from tasks.csv otherwise) and its files. */
export function buildReportData(
  sessionDir: string,
  table: TasksTable,
  /**
   * `waveContexts`: kept by a caller that builds the report again and again (a run), so that
   * unchanged wave files are not parsed again. `pricing`: prices by model for usage lines
   * written without a cost, as status and context.md price them (session.json `pricing`).
   * `attempts`: a run's reader of attempts.ndjson, which parses only the lines added since
   * its last report.
   */
  options: { live?: boolean; waveContexts?: WaveContexts; pricing?: PriceTable; attempts?: AttemptLinesReader } = {},
): ReportData {
  const rows = table.rows;
  const index = new Map(rows.map((row, i) => [row.id, i]));
  // A run's reporter reads only the lines added since its last report.
  const readLines = (options.attempts ?? new AttemptLinesReader(sessionDir)).read();
  const lines = readLines.filter((line) => index.has(line.task));
  const runs = [...new Set(lines.map((line) => line.run))];
  const t0 = lines.reduce((first, line) => Math.min(first, line.startMs), lines[0]?.startMs ?? 0);
  const runIndex = new Map(runs.map((run, i) => [run, i]));
  const lastClass = new Map<string, string>();
  for (const line of lines) lastClass.set(line.task, line.error_class);

  const latest = lines.filter((line) => line.run === runs.at(-1));
  const usage = readUsage(sessionDir, options.pricing);
  const failedSpend = usage && usageOfTasks(usage, rows.filter((row) => row.status === 'failed').map((row) => row.id));
  return {
    version: 2,
    session: basename(sessionDir),
    generated: new Date().toISOString(),
    live: options.live ?? false,
    counts: countByStatus(rows),
    waveCount: rows.reduce((most, row) => Math.max(most, Number(row.wave) || 0), 0),
    wallMs: wallTime(latest),
    retries: lines.filter((line) => line.outcome === 'retried').length,
    tokens: usage ? reportUsage(usage) : null,
    cache: cachedOrNull(readLines, rows),
    cost: usage ? costSummary(usage) : null,
    promptCache: (usage && cachedShareText(usage)) ?? null,
    failedSpend: failedSpend ? failedSpendText(failedSpend) : null,
    columns: reportColumns(table),
    t0: new Date(t0).toISOString(),
    runs,
    tasks: rows.map((row) => [
      row.id,
      row.title,
      row.role,
      Number(row.wave) || 0,
      row.status === '' ? 'pending' : row.status,
      row.findings,
      row.error,
      row.deps,
      row.exec_mode === 'csv-wave' ? '' : row.exec_mode,
      row.description,
    ]),
    attempts: lines.map((line) => [
      index.get(line.task)!,
      line.attempt,
      line.startMs - t0,
      line.duration_ms,
      line.outcome,
      line.error_class,
      line.thread,
      runIndex.get(line.run)!,
    ]),
    failures: groupFailures(rows, (id) => lastClass.get(id) ?? ''),
    details: taskDetails(sessionDir, table, options.waveContexts ?? new WaveContexts(), usage),
  };
}

function reportUsage(sum: UsageSum): ReportUsage {
  return {
    requests: sum.requests,
    prompt: sum.prompt_tokens,
    cached: sum.cached_tokens,
    completion: sum.completion_tokens,
    cost_usd: sum.cost_usd,
    unpriced: sum.unpriced,
    cost_text: costText(sum),
  };
}

/** tasks.csv's columns that hold a value in some task, in file order, with the cells of those a ReportTask does not hold. */
function reportColumns(table: TasksTable): ReportColumn[] {
  const columns: ReportColumn[] = [];
  for (const name of table.columns) {
    const cell = cellReader(name);
    // A column named like an object's own property (`__proto__`) reads as no text: only strings are cells.
    const read = (row: TaskRow) => {
      const value: unknown = cell(row);
      return typeof value === 'string' ? value : '';
    };
    if (name !== 'id' && name !== 'status' && !table.rows.some((row) => read(row) !== '')) continue;
    columns.push(kTaskFields.has(name) ? { name } : { name, cells: table.rows.map(read) });
  }
  return columns;
}

function wallTime(lines: readonly AttemptBrief[]): number {
  if (lines.length === 0) return 0;
  let first = Infinity;
  let last = -Infinity;
  for (const line of lines) {
    first = Math.min(first, line.startMs);
    last = Math.max(last, line.endMs);
  }
  return last - first;
}

/** prev_context (from the wave files), discoveries and artifact paths, per task that has any. */
function taskDetails(sessionDir: string, table: TasksTable, waveContexts: WaveContexts, usage: UsageTotals | undefined): Record<string, TaskDetail> {
  const details: Record<string, TaskDetail> = Object.create(null) as Record<string, TaskDetail>;
  const detail = (id: string): TaskDetail => (details[id] ??= {});
  const ids = new Set(table.rows.map((row) => row.id));
  for (const [id, prevContext] of waveContexts.read(sessionDir, table.format)) {
    if (!ids.has(id)) continue;
    detail(id).prev_context =
      prevContext.length > kMaxPrevContextChars ? `${prevContext.slice(0, kMaxPrevContextChars)}\n[… cut here; the wave file has all of it]` : prevContext;
  }
  for (const line of readDiscoveries(join(sessionDir, kLayout.discoveries))) {
    if (ids.has(line.worker)) (detail(line.worker).discoveries ??= []).push({ type: line.type, data: line.data });
  }
  for (const [id, path] of listArtifacts(sessionDir, ids)) (detail(id).artifacts ??= []).push(path);
  for (const [id, sum] of usage?.byTask ?? []) if (ids.has(id)) detail(id).usage = reportUsage(sum);
  return details;
}

/** The results taken from the cache, or null when none was. */
function cachedOrNull(lines: readonly AttemptBrief[], rows: readonly TaskRow[]): (CachedResults & { text: string }) | null {
  const cached = cachedResults(lines, () => new Set(rows.filter((row) => row.status === 'completed').map((row) => row.id)));
  return cached.tasks > 0 ? { ...cached, text: cacheText(cached.tasks, cached.saved_usd) } : null;
}
