/**
 * Agent-like latency benchmark (`npm run bench:latency`): 5,000 module tasks that each
 * await a random 20–200 ms (uniform, fixed seed: the row's `ms` column, read by the module
 * from task.row.ms), at concurrency 256 on at most 2 worker threads (`--threads 2`). Goal
 * (issue 27): at least 90% of the ideal throughput, concurrency ÷ mean latency (issue 12
 * asked for 95%, above what list scheduling with no overhead reaches here). Section
 * `<!-- bench:latency -->` of BENCHMARKS.md.
 *
 *   npx tsx scripts/bench/latency.ts [--tasks 5000] [--concurrency 256] [--threads 2]
 *                                    [--min-ms 20] [--max-ms 200] [--seed 3] [common options]
 *
 * --quick: 1,000 tasks, 2 runs, BENCHMARKS.md not written unless --write.
 *
 * The module stamps each task's start and end (wall clock, sub-millisecond) into its
 * findings, so that the run can be read back from tasks.csv: the span from the first start
 * to the last end, how many tasks were in flight on average, and how late the timers were.
 * The goal is judged on the engine's own duration (the --json summary's durationMs: from
 * reading tasks.csv to the last write, node start-up excluded); end to end and the task
 * span are reported beside it, and so is what an engine with no overhead would reach (the
 * same durations list-scheduled on the same slots: the drain at the end costs it too). That
 * bound is below the goal at the default sizes (about 94.4% of ideal: the last tasks drain
 * with fewer than 256 in flight), so the section says so, and gives the measured share of
 * the bound too: whether the goal is reachable at all, and how close the engine comes to
 * the best any scheduler could do with these durations.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLayeredDag } from '../gen-dag.js';
import {
  checkRun,
  commonOptions,
  detectRssMethod,
  ensureBuilt,
  fail,
  fixed,
  goalTable,
  isMain,
  kCommonOptions,
  kCommonUsage,
  loadAverage,
  machineLines,
  mean,
  median,
  megabytes,
  printGoal,
  publish,
  readTasksCsv,
  rssMethodText,
  runMain,
  spread,
  thousands,
  timed,
  writeSession,
  type CommonOptions,
  type Measure,
  type RssMethod,
} from './lib.js';
import { kProfileMethod, profileCli, threadTables, topCostLines, type ProfiledRun } from './profile.js';
import { simulate, uniformDurations } from './workload.js';

/** Issue 27's goal: below the no-overhead bound (94.4% at the default sizes), unlike issue 12's 95%. */
const kGoalShare = 0.9;

/** Sleeps the row's `ms`, and says when it started and ended (ms since the epoch, µs precision). */
export const kSleepModule = `const now = () => performance.timeOrigin + performance.now();
export default async (task) => {
  const ms = Number(task.row.ms);
  if (!Number.isFinite(ms)) throw new Error('no ms column');
  const start = now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { findings: \`\${start.toFixed(3)} \${now().toFixed(3)}\` };
};
`;

interface Options extends CommonOptions {
  tasks: number;
  concurrency: number;
  threads: number;
  minMs: number;
  maxMs: number;
  seed: number;
}

/** Start and end stamps of every task, as the module wrote them into findings. */
export interface Stamps {
  start: Float64Array;
  end: Float64Array;
}

/** Reads the stamps back from tasks.csv, in row order. */
export async function readStamps(tasksPath: string, tasks: number): Promise<Stamps> {
  const start = new Float64Array(tasks);
  const end = new Float64Array(tasks);
  let index = 0;
  await readTasksCsv(tasksPath, (row) => {
    const [a, b] = (row['findings'] ?? '').split(' ').map(Number);
    if (!Number.isFinite(a) || !Number.isFinite(b)) fail(`row ${row['id']} has no start and end stamps in findings: ${row['findings']}`);
    start[index] = a!;
    end[index] = b!;
    index++;
  });
  if (index !== tasks) fail(`tasks.csv has ${index} rows, expected ${tasks}`);
  return { start, end };
}

export interface SpanFigures {
  /** First start to last end, ms. */
  spanMs: number;
  /** Mean tasks in flight during the span: the sum of the tasks' own durations ÷ the span. */
  inFlight: number;
  /** Mean of (measured duration − asked duration), ms: timer lateness and event-loop delay in the worker. */
  lateMs: number;
}

export function spanFigures(stamps: Stamps, durations: readonly number[]): SpanFigures {
  let first = Infinity;
  let last = -Infinity;
  let busy = 0;
  let late = 0;
  for (let i = 0; i < durations.length; i++) {
    first = Math.min(first, stamps.start[i]!);
    last = Math.max(last, stamps.end[i]!);
    const took = stamps.end[i]! - stamps.start[i]!;
    if (took < durations[i]! - 1) fail(`task ${i + 1} took ${took.toFixed(1)} ms, less than its ${durations[i]} ms`);
    busy += took;
    late += took - durations[i]!;
  }
  return { spanMs: last - first, inFlight: busy / (last - first), lateMs: late / durations.length };
}

interface RunFigures {
  measure: Measure;
  engineMs: number;
  span: SpanFigures;
}

async function runOnce(scratch: string, rssMethod: RssMethod, options: Options, csv: string, modulePath: string, durations: number[], index: number): Promise<RunFigures> {
  const dir = writeSession(join(scratch, `session-${index}`), csv);
  const measure = await timed(
    { node: ['run', dir, '--module', modulePath, '--concurrency', String(options.concurrency), '--threads', String(options.threads), '--json'] },
    { cwd: scratch, scratch, rssMethod },
  );
  const { summary } = await checkRun(measure, dir, options.tasks, `latency run ${index}`);
  const span = spanFigures(await readStamps(join(dir, 'tasks.csv'), options.tasks), durations);
  rmSync(dir, { recursive: true, force: true });
  return { measure, engineMs: summary.durationMs, span };
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...kCommonOptions,
      tasks: { type: 'string' },
      concurrency: { type: 'string', default: '256' },
      threads: { type: 'string', default: '2' },
      'min-ms': { type: 'string', default: '20' },
      'max-ms': { type: 'string', default: '200' },
      seed: { type: 'string', default: '3' },
    },
    strict: true,
  });
  const common = commonOptions(values);
  const options: Options = {
    ...common,
    tasks: Number(values.tasks ?? (common.quick ? 1000 : 5000)),
    concurrency: Number(values.concurrency),
    threads: Number(values.threads),
    minMs: Number(values['min-ms']),
    maxMs: Number(values['max-ms']),
    seed: Number(values.seed),
  };
  for (const key of ['tasks', 'concurrency', 'threads', 'minMs', 'maxMs'] as const) {
    if (!Number.isInteger(options[key]) || options[key] < 1) fail(`--${key} must be a positive integer`);
  }
  if (options.maxMs < options.minMs) fail('--max-ms must be at least --min-ms');
  return options;
}

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-latency-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const durations = uniformDurations(options.tasks, options.minMs, options.maxMs, options.seed);
    const meanMs = mean(durations);
    const idealPerSecond = options.concurrency / (meanMs / 1000);
    const noOverheadMs = simulate(durations, durations.map(() => []), options.concurrency, 'eager');
    const csv = generateLayeredDag({ tasks: options.tasks, layers: 1, minDeps: 1, maxDeps: 1, seed: options.seed, extraColumns: { ms: durations.map(String) } });
    const modulePath = join(scratch, 'sleep.mjs');
    writeFileSync(modulePath, kSleepModule);
    console.log(
      `${thousands(options.tasks)} tasks of ${options.minMs}–${options.maxMs} ms (mean ${fixed(meanMs, 1)} ms), concurrency ${options.concurrency}, ` +
        `${options.threads} threads: ideal ${thousands(idealPerSecond)} tasks/s (${fixed((options.tasks / idealPerSecond))} s); ` +
        `no-overhead list scheduling ${fixed(noOverheadMs / 1000)} s (${fixed((100 * options.tasks) / (noOverheadMs / 1000) / idealPerSecond, 1)}% of ideal)`,
    );

    // Warm-up, not counted.
    await runOnce(scratch, rssMethod, { ...options, tasks: 200 }, generateLayeredDag({ tasks: 200, layers: 1, minDeps: 1, maxDeps: 1, seed: 1, extraColumns: { ms: durations.slice(0, 200).map(String) } }), modulePath, durations.slice(0, 200), 0);
    const runs: RunFigures[] = [];
    for (let i = 1; i <= options.runs; i++) {
      const run = await runOnce(scratch, rssMethod, options, csv, modulePath, durations, i);
      runs.push(run);
      console.log(
        `run ${i}: ${fixed(run.measure.seconds)} s end to end, engine ${fixed(run.engineMs / 1000)} s, span ${fixed(run.span.spanMs / 1000)} s; ` +
          `${fixed((options.tasks / (run.engineMs / 1000)) / idealPerSecond * 100, 1)}% of ideal (engine), ` +
          `${fixed((100 * noOverheadMs) / run.engineMs, 1)}% of the no-overhead bound; ` +
          `${fixed(run.span.inFlight, 1)} in flight on average; timers ${fixed(run.span.lateMs, 2)} ms late on average`,
      );
    }

    let profile: ProfiledRun | null = null;
    if (options.profile) {
      const dir = writeSession(join(scratch, 'profiled'), csv);
      const args = ['run', dir, '--module', modulePath, '--concurrency', String(options.concurrency), '--threads', String(options.threads), '--json'];
      profile = await profileCli(`${thousands(options.tasks)} sleeping module tasks, concurrency ${options.concurrency}, ${options.threads} threads`, options.tasks, args, { cwd: scratch, scratch });
      await checkRun(profile.measure, dir, options.tasks, 'profiled latency run');
      for (const line of topCostLines(profile)) console.log(line);
    }

    const perSecond = (ms: number) => options.tasks / (ms / 1000);
    const engineShare = perSecond(median(runs.map((r) => r.engineMs))) / idealPerSecond;
    const wallShare = perSecond(1000 * median(runs.map((r) => r.measure.seconds))) / idealPerSecond;
    const spanShare = perSecond(median(runs.map((r) => r.span.spanMs))) / idealPerSecond;
    const noOverheadShare = perSecond(noOverheadMs) / idealPerSecond;
    // Engine throughput against list scheduling with no overhead: the share of what is reachable.
    const boundShare = noOverheadMs / median(runs.map((r) => r.engineMs));
    const reachable =
      noOverheadShare >= kGoalShare
        ? `list scheduling with no overhead reaches ${fixed(100 * noOverheadShare, 1)}% of ideal, so the goal is reachable`
        : `list scheduling with no overhead reaches only ${fixed(100 * noOverheadShare, 1)}% of ideal, so no engine that starts ` +
          `tasks in file order can meet it with these durations`;
    const goals: [string, string, boolean][] = [
      [
        `${thousands(options.tasks)} tasks awaiting ${options.minMs}–${options.maxMs} ms, concurrency ${options.concurrency}, ${options.threads} worker threads: ` +
          `at least ${kGoalShare * 100}% of the ideal throughput (concurrency ÷ mean latency = ${thousands(idealPerSecond)} tasks/s), from the engine's durationMs`,
        `${thousands(perSecond(median(runs.map((r) => r.engineMs))))} tasks/s = ${fixed(100 * engineShare, 1)}% (ratio ${fixed(engineShare / kGoalShare)} of the goal; ` +
          `${fixed(100 * boundShare, 1)}% of the no-overhead bound, which is ${fixed(100 * noOverheadShare, 1)}% of ideal)`,
        engineShare >= kGoalShare,
      ],
    ];

    const lines: string[] = [];
    lines.push('## Agent-like latency: tasks that wait', '');
    lines.push(
      `${thousands(options.tasks)} module tasks, each awaiting a timer of its row's \`ms\` (uniform ${options.minMs}–${options.maxMs} ms, seed ${options.seed}, ` +
        `mean ${fixed(meanMs, 1)} ms), run with \`--concurrency ${options.concurrency} --threads ${options.threads}\` as a child process of the built CLI. ` +
        'Each task writes its start and end time into its findings, so the run is read back from tasks.csv: the span from the first ' +
        'start to the last end, the mean number of tasks in flight, and how late the timers fired. The ideal throughput is ' +
        `concurrency ÷ mean latency = ${thousands(idealPerSecond)} tasks/s (${fixed(options.tasks / idealPerSecond)} s for the run); list-scheduling the same ` +
        `durations on ${options.concurrency} slots with no overhead takes ${fixed(noOverheadMs / 1000)} s (${fixed(100 * noOverheadShare, 1)}% of ideal: the last tasks drain ` +
        `with fewer than ${options.concurrency} in flight). The goal is ${kGoalShare * 100}% of ideal; ${reachable}, and the table gives each measure's share of ` +
        `that bound beside its share of ideal. Every run is checked (summary, tasks.csv, journal, no discovery files). ${options.runs} runs; medians (min–max).`,
      '',
    );
    lines.push(...machineLines('scripts/bench/latency.ts', 'bench:latency', loadAtStart, [`- Peak memory: ${rssMethodText(rssMethod)}`]), '');
    lines.push('| measure | seconds, median (min–max) | tasks/s | share of ideal | share of the no-overhead bound |', '|---|---:|---:|---:|---:|');
    const row = (label: string, seconds: number[]) =>
      `| ${label} | ${spread(seconds)} | ${thousands(options.tasks / median(seconds))} | ${fixed((100 * perSecond(1000 * median(seconds))) / idealPerSecond, 1)}% | ` +
      `${fixed((100 * noOverheadMs) / (1000 * median(seconds)), 1)}% |`;
    lines.push(row('end to end (node start-up included)', runs.map((r) => r.measure.seconds)));
    lines.push(row("engine (the summary's durationMs)", runs.map((r) => r.engineMs / 1000)));
    lines.push(row('task span (first start to last end)', runs.map((r) => r.span.spanMs / 1000)));
    lines.push(`| no overhead (simulated list scheduling) | ${fixed(noOverheadMs / 1000)} | ${thousands(perSecond(noOverheadMs))} | ${fixed(100 * noOverheadShare, 1)}% | 100.0% |`);
    lines.push('');
    lines.push(
      `Mean tasks in flight during the span: ${spread(runs.map((r) => r.span.inFlight), 1)} of ${options.concurrency}; ` +
        `timers fired ${spread(runs.map((r) => r.span.lateMs))} ms late on average (event-loop delay in the workers); ` +
        `CPU ${spread(runs.map((r) => r.measure.cpuSeconds))} s per run; peak memory ${megabytes(Math.max(...runs.map((r) => r.measure.maxRssKb)))} MB. ` +
        `End to end the run reaches ${fixed(100 * wallShare, 1)}% of ideal, over the task span ${fixed(100 * spanShare, 1)}%.`,
      '',
    );
    lines.push(...goalTable(goals), '');
    if (profile) {
      lines.push('### Top three remaining costs', '', kProfileMethod, '', ...topCostLines(profile), '');
      lines.push('### Self time per thread', '', ...threadTables(profile));
    }
    publish('latency', lines.join('\n'), options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/latency.ts [--tasks 5000] [--concurrency 256] [--threads 2] [--min-ms 20] [--max-ms 200] [--seed 3] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:latency', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
