/**
 * Eager vs waves benchmark (`npm run bench:schedule`): a layered DAG of 2,000 tasks (20
 * layers of 100; each task past the first layer depends on 1–3 tasks of the layer before)
 * whose durations are log-normal (median 50 ms, sigma 0.8, fixed seed), run at concurrency
 * 32 with `--schedule eager` and with `--schedule waves`, interleaved. Each task is a module
 * task that sleeps its row's `ms` (task.row.ms). Goals: the eager makespan at most 0.75 ×
 * the wave-barrier makespan, and within 10% of the lower bound max(critical path, total
 * work ÷ concurrency), computed from the same durations and DAG. Section
 * `<!-- bench:schedule -->` of BENCHMARKS.md.
 *
 *   npx tsx scripts/bench/schedule.ts [--tasks 2000] [--layers 20] [--min-deps 1] [--max-deps 3]
 *                                     [--median-ms 50] [--sigma 0.8] [--concurrency 32] [--seed 11]
 *                                     [common options]
 *
 * --quick: 400 tasks in 8 layers of median 20 ms, 2 runs each, BENCHMARKS.md not written
 * unless --write.
 *
 * The makespan is read from the tasks themselves: each writes its start and end time into
 * its findings, and the makespan is the last end minus the first start (node start-up,
 * validation and the final write apart; the engine's durationMs and the wall time are
 * reported too). The same stamps check that eager never started a task before its deps
 * ended. What list scheduling with no overhead would give (a free slot takes the first
 * ready task in file order, as csv-wave's scheduler does) is reported beside each policy.
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
  median,
  printGoal,
  publish,
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
import { kSleepModule, readStamps, spanFigures, type SpanFigures, type Stamps } from './latency.js';
import { criticalPath, depsOf, logNormalDurations, simulate } from './workload.js';

const kGoalEagerOverWaves = 0.75;
const kGoalOverBound = 1.1;

type Policy = 'eager' | 'waves';

interface Options extends CommonOptions {
  tasks: number;
  layers: number;
  minDeps: number;
  maxDeps: number;
  medianMs: number;
  sigma: number;
  concurrency: number;
  seed: number;
}

interface RunFigures {
  measure: Measure;
  engineMs: number;
  span: SpanFigures;
}

/** Eager must never start a task before all of its deps ended (1 ms of slack for the stamps). */
function checkOrder(stamps: Stamps, deps: readonly (readonly number[])[]): void {
  deps.forEach((list, task) => {
    for (const dep of list) {
      if (stamps.start[task]! < stamps.end[dep]! - 1) fail(`task ${task + 1} started before its dep ${dep + 1} ended`);
    }
  });
}

async function runOnce(
  scratch: string,
  rssMethod: RssMethod,
  options: Options,
  csv: string,
  modulePath: string,
  durations: number[],
  deps: number[][],
  policy: Policy,
  index: number,
): Promise<RunFigures> {
  const dir = writeSession(join(scratch, `session-${policy}-${index}`), csv);
  const args = ['run', dir, '--module', modulePath, '--concurrency', String(options.concurrency), '--schedule', policy, '--json'];
  const measure = await timed({ node: args }, { cwd: scratch, scratch, rssMethod });
  const { summary } = await checkRun(measure, dir, durations.length, `${policy} run ${index}`);
  const stamps = await readStamps(join(dir, 'tasks.csv'), durations.length);
  checkOrder(stamps, deps);
  rmSync(dir, { recursive: true, force: true });
  return { measure, engineMs: summary.durationMs, span: spanFigures(stamps, durations) };
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...kCommonOptions,
      tasks: { type: 'string' },
      layers: { type: 'string' },
      'min-deps': { type: 'string', default: '1' },
      'max-deps': { type: 'string', default: '3' },
      'median-ms': { type: 'string' },
      sigma: { type: 'string', default: '0.8' },
      concurrency: { type: 'string', default: '32' },
      seed: { type: 'string', default: '11' },
    },
    strict: true,
  });
  const common = commonOptions(values);
  const options: Options = {
    ...common,
    tasks: Number(values.tasks ?? (common.quick ? 400 : 2000)),
    layers: Number(values.layers ?? (common.quick ? 8 : 20)),
    minDeps: Number(values['min-deps']),
    maxDeps: Number(values['max-deps']),
    medianMs: Number(values['median-ms'] ?? (common.quick ? 20 : 50)),
    sigma: Number(values.sigma),
    concurrency: Number(values.concurrency),
    seed: Number(values.seed),
  };
  for (const key of ['tasks', 'layers', 'minDeps', 'maxDeps', 'concurrency'] as const) {
    if (!Number.isInteger(options[key]) || options[key] < 1) fail(`--${key} must be a positive integer`);
  }
  if (!(options.medianMs > 0) || !(options.sigma >= 0)) fail('--median-ms must be > 0 and --sigma >= 0');
  return options;
}

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-schedule-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const durations = logNormalDurations(options.tasks, options.medianMs, options.sigma, options.seed + 1);
    const csv = generateLayeredDag({
      tasks: options.tasks,
      layers: options.layers,
      minDeps: options.minDeps,
      maxDeps: options.maxDeps,
      seed: options.seed,
      extraColumns: { ms: durations.map(String) },
    });
    const deps = depsOf(csv);
    const totalMs = durations.reduce((sum, ms) => sum + ms, 0);
    const pathMs = criticalPath(durations, deps);
    const boundMs = Math.max(pathMs, totalMs / options.concurrency);
    const ideal = { eager: simulate(durations, deps, options.concurrency, 'eager'), waves: simulate(durations, deps, options.concurrency, 'waves') };
    const modulePath = join(scratch, 'sleep.mjs');
    writeFileSync(modulePath, kSleepModule);
    console.log(
      `${thousands(options.tasks)} tasks in ${options.layers} layers, durations log-normal (median ${options.medianMs} ms, sigma ${options.sigma}, ` +
        `max ${Math.max(...durations)} ms), concurrency ${options.concurrency}: critical path ${fixed(pathMs / 1000)} s, total work ÷ concurrency ` +
        `${fixed(totalMs / options.concurrency / 1000)} s, bound ${fixed(boundMs / 1000)} s; no-overhead eager ${fixed(ideal.eager / 1000)} s, waves ${fixed(ideal.waves / 1000)} s`,
    );

    // Warm-up, not counted.
    await runOnce(scratch, rssMethod, options, csv, modulePath, durations, deps, 'eager', 0);
    const runs: Record<Policy, RunFigures[]> = { eager: [], waves: [] };
    for (let i = 1; i <= options.runs; i++) {
      // Alternate which goes first, so that neither always follows the other.
      const order: Policy[] = i % 2 === 1 ? ['eager', 'waves'] : ['waves', 'eager'];
      for (const policy of order) runs[policy].push(await runOnce(scratch, rssMethod, options, csv, modulePath, durations, deps, policy, i));
      const [e, w] = [runs.eager[i - 1]!, runs.waves[i - 1]!];
      console.log(
        `pair ${i}: eager makespan ${fixed(e.span.spanMs / 1000)} s (${fixed(e.measure.seconds)} s end to end), waves ${fixed(w.span.spanMs / 1000)} s ` +
          `(${fixed(w.measure.seconds)} s); eager/waves ${fixed(e.span.spanMs / w.span.spanMs)}, eager/bound ${fixed(e.span.spanMs / boundMs, 3)}`,
      );
    }

    let profile: ProfiledRun | null = null;
    if (options.profile) {
      const dir = writeSession(join(scratch, 'profiled'), csv);
      const args = ['run', dir, '--module', modulePath, '--concurrency', String(options.concurrency), '--schedule', 'eager', '--json'];
      profile = await profileCli(`${thousands(options.tasks)} sleeping module tasks, eager, concurrency ${options.concurrency}`, options.tasks, args, { cwd: scratch, scratch });
      await checkRun(profile.measure, dir, options.tasks, 'profiled eager run');
      for (const line of topCostLines(profile)) console.log(line);
    }

    const span = (policy: Policy) => median(runs[policy].map((r) => r.span.spanMs));
    const pairRatio = median(runs.eager.map((e, i) => e.span.spanMs / runs.waves[i]!.span.spanMs));
    const eagerOverWaves = span('eager') / span('waves');
    const eagerOverBound = span('eager') / boundMs;
    const goals: [string, string, boolean][] = [
      [
        `eager makespan at most ${kGoalEagerOverWaves} × the wave-barrier makespan`,
        `${fixed(eagerOverWaves)} (${fixed(span('eager') / 1000)} s / ${fixed(span('waves') / 1000)} s; per pair ${fixed(pairRatio)})`,
        eagerOverWaves <= kGoalEagerOverWaves,
      ],
      [
        `eager makespan within 10% of the lower bound max(critical path, total work ÷ concurrency) = ${fixed(boundMs / 1000)} s`,
        `${fixed(eagerOverBound, 3)} × the bound (${fixed(span('eager') / 1000)} s)`,
        eagerOverBound <= kGoalOverBound,
      ],
    ];

    const lines: string[] = [];
    lines.push('## Eager vs waves: scheduling a layered DAG', '');
    lines.push(
      `A layered DAG of ${thousands(options.tasks)} tasks (\`generateLayeredDag\` in scripts/gen-dag.ts: ${options.layers} layers of ${thousands(options.tasks / options.layers)}; ` +
        `each task past the first layer depends on ${options.minDeps}–${options.maxDeps} tasks of the layer before; seed ${options.seed}). ` +
        `Each task is a module task that sleeps its row's \`ms\`, drawn log-normal (median ${options.medianMs} ms, sigma ${options.sigma}, seed ${options.seed + 1}: ` +
        `mean ${fixed(totalMs / options.tasks, 1)} ms, max ${Math.max(...durations)} ms). Run at \`--concurrency ${options.concurrency}\` with \`--schedule eager\` and ` +
        `\`--schedule waves\`, ${options.runs} times each, interleaved (the order alternates). The makespan is read from the tasks' own start and end stamps ` +
        '(last end − first start), so node start-up, validation and the final write are not in it; the engine\'s durationMs and the wall time are shown beside it. ' +
        "Every run is checked (summary, tasks.csv, journal, no discovery files), and the stamps show that no task started before its deps ended.",
      '',
    );
    lines.push(...machineLines('scripts/bench/schedule.ts', 'bench:schedule', loadAtStart, [`- Peak memory: ${rssMethodText(rssMethod)}`]), '');
    lines.push(
      `Lower bound: max(critical path ${fixed(pathMs / 1000)} s, total work ${fixed(totalMs / 1000)} s ÷ ${options.concurrency} = ${fixed(totalMs / options.concurrency / 1000)} s) ` +
        `= **${fixed(boundMs / 1000)} s**.`,
      '',
    );
    lines.push(
      '| schedule | makespan s, median (min–max) | × bound | no overhead (list scheduling, simulated) s | engine s (durationMs) | wall s | mean tasks in flight | timers late, ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const policy of ['eager', 'waves'] as const) {
      const r = runs[policy];
      lines.push(
        `| ${policy} | ${spread(r.map((x) => x.span.spanMs / 1000))} | ${fixed(span(policy) / boundMs)} | ${fixed(ideal[policy] / 1000)} (${fixed(ideal[policy] / boundMs)} × bound) | ` +
          `${fixed(median(r.map((x) => x.engineMs / 1000)))} | ${fixed(median(r.map((x) => x.measure.seconds)))} | ${fixed(median(r.map((x) => x.span.inFlight)), 1)} | ` +
          `${fixed(median(r.map((x) => x.span.lateMs)))} |`,
      );
    }
    lines.push('');
    lines.push(
      `eager/waves: ${fixed(eagerOverWaves)} (median of the per-pair ratios ${fixed(pairRatio)}; with no overhead ${fixed(ideal.eager / ideal.waves)}). ` +
        `Eager is ${fixed(100 * (eagerOverBound - 1), 1)}% above the bound; list scheduling with no overhead would be ${fixed(100 * (ideal.eager / boundMs - 1), 1)}% above it, ` +
        `so ${fixed(span('eager') - ideal.eager > 0 ? (span('eager') - ideal.eager) / 1000 : 0)} s of the eager makespan is the engine's overhead (and timer lateness).`,
      '',
    );
    lines.push(...goalTable(goals), '');
    if (profile) {
      lines.push('### Top three remaining costs', '', kProfileMethod, '', ...topCostLines(profile), '');
      lines.push('### Self time per thread', '', ...threadTables(profile));
    }
    publish('schedule', lines.join('\n'), options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage =
  'npx tsx scripts/bench/schedule.ts [--tasks 2000] [--layers 20] [--min-deps 1] [--max-deps 3] [--median-ms 50] [--sigma 0.8] ' +
  `[--concurrency 32] [--seed 11] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:schedule', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
