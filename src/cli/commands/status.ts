import type { Command } from 'commander';
import { buildDag } from '../../graph/dag.js';
import { computeWaves } from '../../graph/waves.js';
import { splitList } from '../../core/id-list.js';
import type { TaskRow } from '../../core/task.js';
import { WaveError } from '../../errors.js';
import { runHoldsLock } from '../../session/lock.js';
import { openSession } from '../../session/session.js';
import { readSessionId } from '../../session/files/session-id.js';
import { countByStatus, countByWave, rowObject, staleInSession, taskLines } from '../../commands/status-report.js';
import { cachedResults, readAttempts } from '../../knowledge/attempt-lines.js';
import { cacheText } from '../../knowledge/cost-text.js';
import { kTaskStatuses } from '../../schema/row.js';
import { skippedForFailure, statusOf } from '../../core/skip-cause.js';
import { readUsage } from '../../knowledge/usage.js';
import { cachedShareText, costLine, spendJson, spendText, usageProblemLines } from '../../knowledge/cost-text.js';
import { currentTasks } from '../../report/session-state.js';
import { ExitCode, printJson, type CliIo } from '../io.js';
import { addPipelineFlag, sessionOverrides } from '../pipeline-flag.js';
import type { PipelineName, SessionConfig } from '../../schema/session.js';
import { redisUrlFrom } from '../../backend/bullmq/redis/redis-url.js';
import type { JobPlace } from '../../backend/bullmq/session/worker-presence.js';
import { readJournalWithCarried } from '../../session/journal.js';
import { jobsOut } from '../../run/job-reattach.js';
import { flagOptionEntries, kFlagOptionTable } from '../../option-table.js';
import { addTableFlags, tableFlag } from '../table-flags.js';

/** status's flags as commander hands them over (`--redis`'s definition: option-table.ts' kFlagOptionTable). */
interface StatusFlags {
  redis?: string;
  json?: boolean;
  only?: string;
  wave?: string;
}

export function registerStatus(program: Command, io: CliIo, done: (code: number) => void): void {
  addPipelineFlag(addTableFlags(program
    .command('status')
    .description('one line per task ([DONE] [STALE] [RUN] [QUEUED] [INTR] [WAIT] [FAIL] [SKIP] [----]), then counts per status and wave')
    .argument('<session>', 'session folder, or the path of its tasks.csv')
    .option('--json', 'print {"tasks": [rows by column name], "counts": {status: n}, "tokens"?: {prompt, completion}, "usage"?: {prompt, completion, cached, requests, cost_usd, unpriced_requests, tasks: {id: the same}, problems?: [{line, problem}]}, "cache"?: {tasks, saved_usd}, "stale"?: {id: [what changed]}, "interrupted"?: [ids], "queued"?: [ids], "workers"?: {id: worker}}; exit 1 when tasks failed')
    .option('--only <statuses>', `list only the tasks of these statuses, comma-separated (${kTaskStatuses.join(', ')}); counts stay the whole session's`)
    .option('--wave <n>', 'list only the tasks of wave N (counts stay the whole session\'s)'), flagOptionEntries(), 'status'))
    .action(async (sessionPath: string, options: StatusFlags & { pipeline?: PipelineName }) => {
      // status reads what is there, even a file that would not validate: it is how a person
      // looks at a session in any state.
      // The pipeline does not change what status shows; the flag is taken like everywhere else.
      const session = openSession(sessionPath, sessionOverrides(options));
      // With the results a run accepted since its last rewrite of tasks.csv (the journal), so
      // that status shows what a running run has done, or what a killed one left for resume.
      const table = currentTasks(session);
      const counts = countByStatus(table.rows);
      const usage = readUsage(session.dir, session.config.pricing);
      // usage.ndjson may have been cut short or edited: what is not counted is said, on stderr (stdout stays the answer).
      for (const line of usageProblemLines(usage?.problems ?? [])) io.stderr(`status: ${line}\n`);
      const known = new Set(table.rows.map((row) => row.id));
      const strangers = usage ? [...usage.byTask.keys()].filter((id) => !known.has(id)) : [];
      const graph = buildDag(table.rows.map((row) => ({ id: row.id, deps: splitList(row.deps) })));
      const { waves } = computeWaves(graph);
      const wanted = selectRows(options, waves);
      // A task left in_progress with no run holding the lock was in flight when its run was killed.
      const running = runHoldsLock(session.dir);
      const interrupted = running ? [] : table.rows.filter((row) => statusOf(row) === 'in_progress').map((row) => row.id);
      // The README's rule for every command: failed tasks, or tasks skipped for a failure or a
      // blocking checkpoint, are exit 1, so that `csv-wave status s && deploy` is a gate.
      const exitCode = table.rows.some((row) => statusOf(row) === 'failed' || skippedForFailure(row)) ? ExitCode.TasksFailed : ExitCode.Ok;
      // With --backend bullmq, Redis says which tasks out wait in the queue and which worker runs the others.
      const places = running && counts.in_progress > 0 ? await placesOfTasksOut(session.dir, options, session.config.backend, io) : new Map<string, JobPlace>();
      const workers = new Map<string, string>();
      const queued = new Set<string>();
      for (const [id, place] of places) {
        if (place.kind === 'running') workers.set(id, place.worker);
        else queued.add(id);
      }
      // The result cache (docs/cache.md): the results taken from it, and the completed tasks whose inputs changed since.
      const attempts = readAttempts(session.dir);
      const cached = cachedResults(attempts, new Set(table.rows.filter((row) => statusOf(row) === 'completed').map((row) => row.id)));
      const stale = staleInSession(session, table.rows, attempts, (message) => io.stderr(`status: ${message}\n`));
      if (options.json) {
        const tokens = usage
          ? {
              tokens: { prompt: usage.prompt_tokens, completion: usage.completion_tokens },
              // The cost of the session and of each task (by id) from usage.ndjson, in US dollars.
              usage: {
                ...spendJson(usage),
                tasks: Object.fromEntries([...usage.byTask].map(([id, sum]) => [id, spendJson(sum)])),
                ...(usage.problems.length === 0 ? {} : { problems: usage.problems }),
              },
            }
          : {};
        const interruptedJson = interrupted.length > 0 ? { interrupted } : {};
        const waiting = queued.size > 0 ? { queued: [...queued] } : {};
        const where = workers.size > 0 ? { workers: Object.fromEntries(workers) } : {};
        const fromCache = cached.tasks > 0 ? { cache: cached } : {};
        const changed = stale.size > 0 ? { stale: Object.fromEntries(stale) } : {};
        printJson(io, { tasks: table.rows.filter(wanted).map((row) => rowObject(table, row)), counts, ...tokens, ...interruptedJson, ...waiting, ...where, ...fromCache, ...changed });
        done(exitCode);
        return;
      }
      const lines = taskLines(table, running, stale).filter((_, index) => wanted(table.rows[index]!));
      for (const line of lines) {
        if (line.tag !== '[RUN]') continue;
        if (queued.has(line.id)) {
          line.tag = '[QUEUED]';
          line.detail = 'queued: waiting for a worker';
        }
        const worker = workers.get(line.id);
        if (worker !== undefined) line.detail = `running on ${worker}`;
      }
      const idWidth = Math.min(24, Math.max(0, ...lines.map((line) => line.id.length)));
      const roleWidth = Math.min(16, Math.max(0, ...lines.map((line) => line.role.length + 2)));
      // The tags line up: [QUEUED] is the one longer than the others.
      const tagWidth = Math.max(7, ...lines.map((line) => line.tag.length + 1));
      for (const line of lines) {
        const spent = usage?.byTask.get(line.id);
        io.stdout(
          // The spending goes before the detail: the detail (an error's whole first line) ends the line.
          `${line.tag.padEnd(tagWidth)}${line.id.padEnd(idWidth)}  ${`(${line.role})`.padEnd(roleWidth)}${spent ? ` [${spendText(spent)}]` : ''} -> ${line.detail}\n`,
        );
      }
      const total = table.rows.length;
      const invalid = table.rows.length - Object.values(counts).reduce((a, b) => a + b, 0);
      const inProgress = running ? 'in_progress' : 'interrupted';
      // The tasks out that wait in the queue are counted apart from those that run.
      const byStatus = Object.entries(counts).flatMap(([status, n]): [string, number][] =>
        status === 'in_progress' ? [[inProgress, n - queued.size], ['queued', queued.size]] : [[status, n]],
      );
      const summary = [...byStatus, ['invalid status', invalid] as const]
        .filter(([, n]) => n > 0)
        .map(([status, n]) => `${status} ${n}${status === 'completed' && stale.size > 0 ? ` (${stale.size} stale)` : ''}`)
        .join(', ');
      io.stdout(`\n${total} tasks: ${summary || 'none'}\n`);
      if (cached.tasks > 0) io.stdout(`${cacheText(cached.tasks, cached.saved_usd)}\n`);
      if (stale.size > 0) io.stdout(`${stale.size} stale task(s): their inputs changed since their result was made; \`csv-wave rerun ${sessionPath} --stale\` runs them again\n`);
      if (usage) {
        const share = cachedShareText(usage);
        io.stdout(`Tokens: ${usage.prompt_tokens} prompt, ${usage.completion_tokens} completion\n${share === undefined ? '' : `Prompt cache: ${share}\n`}${costLine(usage)}\n`);
        // A task removed from tasks.csv after it ran still spent what it spent.
        if (strangers.length > 0) io.stdout(`${strangersLine(strangers)}\n`);
      }
      for (const [wave, byStatus] of countByWave(table, waves)) {
        const inWave = Object.values(byStatus).reduce((a, b) => a + b, 0);
        const done = byStatus.completed + byStatus.skipped + byStatus.failed;
        const label = wave === 0 ? 'No wave (on a cycle)' : `Wave ${wave}`;
        const waiting = [...queued].filter((id) => (waves.get(id) ?? 0) === wave).length;
        const out = `${running ? 'running' : 'interrupted'} ${byStatus.in_progress - waiting}${waiting > 0 ? `, queued ${waiting}` : ''}`;
        io.stdout(`${label}: ${done}/${inWave} finished (completed ${byStatus.completed}, failed ${byStatus.failed}, skipped ${byStatus.skipped}, ${out}, pending ${byStatus.pending})\n`);
      }
      done(exitCode);
    });
}

/** The tasks usage.ndjson names that tasks.csv does not hold: their spending is in the totals, under no task line. */
function strangersLine(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return `usage.ndjson names ${ids.length} task(s) tasks.csv does not hold (${shown}${ids.length > 10 ? ', …' : ''}): their tokens and cost are in the totals`;
}

/** The rows `--only` and `--wave` keep (all of them without either). */
function selectRows(options: StatusFlags, waves: ReadonlyMap<string, number>): (row: TaskRow) => boolean {
  let statuses: Set<string> | undefined;
  if (options.only !== undefined) {
    statuses = new Set(splitList(options.only.replaceAll(',', ';')));
    const known = new Set<string>(kTaskStatuses);
    const unknown = [...statuses].filter((status) => !known.has(status));
    if (statuses.size === 0 || unknown.length > 0) {
      throw new WaveError(
        'USAGE',
        `Expected \`--only\` to be statuses among ${kTaskStatuses.join(', ')}, comma-separated, got \`${options.only}\``,
      );
    }
  }
  let wave: number | undefined;
  if (options.wave !== undefined) {
    wave = Number(options.wave);
    if (!/^\d+$/.test(options.wave.trim()) || wave < 1) {
      throw new WaveError('USAGE', `Expected \`--wave\` to be a wave number (1, 2, …), got \`${options.wave}\``);
    }
  }
  return (row) => (!statuses || statuses.has(statusOf(row))) && (wave === undefined || waves.get(row.id) === wave);
}

/**
 * For a session running on bullmq: where the job of each task out is, asked of Redis
 * (`--redis`, else session.json's backend url, else CSV_WAVE_REDIS_URL): waiting in the
 * queue, or run by a worker (host, pid). The journal names each task's job: the jobs
 * anyone else put in the queue are not looked at. A Redis that cannot be reached is said
 * on stderr; status shows the rest, those tasks as running.
 */
async function placesOfTasksOut(
  sessionDir: string,
  flags: StatusFlags,
  backend: SessionConfig['backend'],
  io: CliIo,
): Promise<Map<string, JobPlace>> {
  try {
    // Read here, inside the try: a bad --redis costs only the places, as a Redis away does.
    const flag = tableFlag(kFlagOptionTable.statusRedis, flags);
    const url = redisUrlFrom(flag ?? (backend?.type === 'bullmq' ? backend.url : undefined));
    if (url === undefined) return new Map();
    // A session that never ran on bullmq has no id (.csv-wave/session-id): no worker runs its tasks.
    const sessionId = readSessionId(sessionDir);
    if (sessionId === undefined) return new Map();
    const jobs = jobsOut(readJournalWithCarried(sessionDir));
    if (jobs.size === 0) return new Map();
    // Loaded only here: BullMQ and ioredis are most of a start-up.
    const { jobPlaces } = await import('../../backend/bullmq/session/worker-presence.js');
    return await jobPlaces(url, sessionId, jobs);
  } catch (error) {
    io.stderr(`status: which tasks wait in the queue and which worker runs each is not shown: ${(error as Error).message}\n`);
    return new Map();
  }
}
