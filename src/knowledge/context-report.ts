import { join } from 'node:path';
import type { TasksTable } from '../csv/tasks-table.js';
import { readDiscoveries } from './discoveries-board.js';
import { readUsage } from './usage.js';
import { cachedShareText, cacheText, costLine, costText, usageProblemLines } from './cost-text.js';
import type { PriceTable } from './pricing.js';
import { kLayout, type SessionFileWriter } from '../layout.js';

export interface ContextReportInput {
  table: TasksTable;
  waves: ReadonlyMap<string, number>;
  durationMs: number;
  /** Why the run stopped early, if it did. */
  stopReason: string;
  /** Prices by model, for usage lines written without a cost. @default none */
  pricing?: PriceTable;
  /** The tasks this run took from the result cache, and what their results had cost. @default none */
  cache?: { tasks: number; saved_usd: number };
}

const kMaxDetailedTasks = 1000;
const kStatuses = ['completed', 'failed', 'skipped', 'in_progress', 'pending'] as const;

/** Writes `context.md`, the human report of a run: summary, waves, tasks, discoveries, time. */
export function writeContextReport(files: SessionFileWriter, input: ContextReportInput): void {
  const sessionDir = files.dir;
  const { table, waves, pricing } = input;
  const statusOf = (status: string) => (status === '' ? 'pending' : status);
  const lines: string[] = ['# Run report', '', `Written ${new Date().toISOString()}; the run took ${formatDuration(input.durationMs)}.`, ''];
  if (input.stopReason !== '') lines.push(`**Stopped early.** ${input.stopReason}`, '');

  lines.push('## Summary', '', '| status | tasks |', '|---|---|');
  for (const status of kStatuses) {
    const count = table.rows.filter((row) => statusOf(row.status) === status).length;
    if (count > 0) lines.push(`| ${status} | ${count} |`);
  }
  lines.push(`| total | ${table.rows.length} |`, '');
  if (input.cache !== undefined && input.cache.tasks > 0) lines.push(`This run took ${cacheText(input.cache.tasks, input.cache.saved_usd)}.`, '');

  lines.push('## Waves', '', '| wave | tasks | completed | failed | skipped |', '|---|---|---|---|---|');
  const byWave = new Map<number, string[]>();
  for (const row of table.rows) {
    const wave = waves.get(row.id) ?? 0;
    const statuses = byWave.get(wave);
    if (statuses) statuses.push(statusOf(row.status));
    else byWave.set(wave, [statusOf(row.status)]);
  }
  for (const [wave, statuses] of [...byWave.entries()].sort(([a], [b]) => a - b)) {
    const count = (status: string) => statuses.filter((s) => s === status).length;
    lines.push(`| ${wave} | ${statuses.length} | ${count('completed')} | ${count('failed')} | ${count('skipped')} |`);
  }
  lines.push('', '## Tasks', '');
  // A big run lists what needs attention rather than every task.
  const detailed =
    table.rows.length <= kMaxDetailedTasks
      ? table.rows
      : table.rows.filter((row) => row.status === 'failed' || row.status === 'skipped').slice(0, kMaxDetailedTasks);
  if (detailed.length < table.rows.length) {
    lines.push(`${table.rows.length} tasks: only the failed and skipped ones are listed (at most ${kMaxDetailedTasks}); tasks.csv has them all.`, '');
  }
  for (const row of detailed) {
    lines.push(`### ${row.id}${row.title === '' ? '' : `: ${row.title}`}`, '');
    lines.push(`- role: ${row.role}; wave ${waves.get(row.id) ?? '?'}; status: ${statusOf(row.status)}`);
    if (row.findings !== '') lines.push(`- findings: ${row.findings.replace(/\r?\n/g, ' ')}`);
    if (row.error !== '') lines.push(`- error: ${row.error.replace(/\r?\n/g, ' ')}`);
    if (row.gc_signal !== '') lines.push(`- gc_signal: ${row.gc_signal} (${row.severity_summary})`);
    lines.push('');
  }

  const usage = readUsage(sessionDir, pricing);
  if (usage) {
    lines.push('## Tokens and cost', '', `${usage.prompt_tokens} prompt and ${usage.completion_tokens} completion tokens in all, in ${usage.requests} request(s).`, '');
    const share = cachedShareText(usage);
    if (share !== undefined) lines.push(`Prompt cache: ${share}.`, '');
    lines.push(costLine(usage), '');
    // A file cut short or edited by hand: what was not counted is said, by line.
    const problems = usageProblemLines(usage.problems);
    if (problems.length > 0) lines.push(...problems.map((problem) => `- ${problem}`), '');
    lines.push('| task | requests | prompt | cached | completion | cost |', '|---|---|---|---|---|---|');
    const known = new Set(table.rows.map((row) => row.id));
    for (const [task, spent] of usage.byTask) {
      // Ids in usage.ndjson are checked task ids: no `|` or line break can spoil the table.
      const name = known.has(task) ? task : `${task} (not in tasks.csv)`;
      lines.push(`| ${name} | ${spent.requests} | ${spent.prompt_tokens} | ${spent.cached_tokens} | ${spent.completion_tokens} | ${costText(spent)} |`);
    }
    lines.push('');
  }

  lines.push('## Discoveries', '');
  const discoveries = readDiscoveries(join(sessionDir, kLayout.discoveries));
  if (discoveries.length === 0) lines.push('None.', '');
  const byType = new Map<string, number>();
  for (const discovery of discoveries) byType.set(discovery.type, (byType.get(discovery.type) ?? 0) + 1);
  for (const [type, count] of byType) {
    lines.push(`### ${type} (${count})`, '');
    for (const discovery of discoveries.filter((d) => d.type === type).slice(0, 20)) {
      const data = discovery.data;
      const name = data['title'] ?? data['name'] ?? data['idea_title'] ?? data['proposal_title'] ?? data['round'];
      lines.push(`- ${name === undefined ? JSON.stringify(data).slice(0, 120) : String(name)} (by ${discovery.worker})`);
    }
    if (count > 20) lines.push(`- … and ${count - 20} more`);
    lines.push('');
  }
  files.replace(kLayout.context, lines.join('\n'));
}

export function formatDuration(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}
