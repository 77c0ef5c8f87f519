/**
 * Scale benchmark (`npm run bench:scale`), section `<!-- bench:scale -->` of BENCHMARKS.md:
 *
 *   5. Scale: `csv-wave plan` on 1,000,000 tasks (gen-dag, mean 3 deps) in under 2 GB of
 *      memory with a 1M/100k time ratio of at most 11 (issue 12; it was 4 GB and 12), and
 *      `csv-wave run` of 1,000,000 no-op module tasks (10 waves, each task depending on one
 *      of the wave before, concurrency 64) to completion with tasks.csv written, its
 *      1M/100k time ratio at most 12; time and peak memory of both.
 *   6. Merge-back: the time per task of a run at 100,000 rows within 1.3 × that at 10,000.
 *
 *   npx tsx scripts/bench/scale.ts [--big N] [--big-runs N] [--profile-size N] [common options]
 *
 * Sizes: plan at 100k and 1M, runs at 10k, 100k and 1M. --quick: 10k and 100k only (plan
 * and run; goal 5's ratio is then taken over 10k→100k as a stand-in), 2 runs, BENCHMARKS.md
 * not written unless --write. --big: the largest size (default 1,000,000); --big-runs: runs
 * at that size (default: --runs; a 1M run takes minutes, and progress is printed every 15 s).
 * --profile-size: the size of the profiled plan and run (default: the largest).
 *
 * Every run is checked: exit 0, summary, every tasks.csv row completed, journal whole,
 * no discovery file for plain results (plan: every wave cell right, every other cell as it was). Ratios of
 * the runs are taken from the engine's own durationMs (node start-up, a fixed cost that
 * flatters the larger size, excluded), of plans from the wall time; the other is shown too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateDag, generateLayeredDag } from '../gen-dag.js';
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
  megabytes,
  printGoal,
  publish,
  rssMethodText,
  runMain,
  spread,
  thousands,
  timed,
  watchSession,
  writeSession,
  type CommonOptions,
  type Measure,
  type RssMethod,
} from './lib.js';
import { kProfileMethod, profileCli, threadTables, topCostLines, type ProfiledRun } from './profile.js';
import { checkPlan } from './plan.js';

const kMeanDeps = 3;
const kPlanSeed = 42;
const kRunSeed = 7;
const kWaves = 10;
const kConcurrency = 64;
const kGoalPlanBytes = 2e9;
const kGoalPlanRatio = 11;
const kGoalRunRatio = 12;
const kGoalMergeRatio = 1.3;
const kNoopModule = "export default async () => ({findings: ''});\n";

interface Options extends CommonOptions {
  planSizes: number[];
  runSizes: number[];
  bigRuns: number;
  profileSize: number;
}

interface PlanResult {
  tasks: number;
  bytes: number;
  runs: Measure[];
}

interface RunResult {
  tasks: number;
  runs: { measure: Measure; engineMs: number; rewrites: number }[];
}

const csvCache = new Map<string, string>();
function cached(key: string, make: () => string): string {
  let text = csvCache.get(key);
  if (text === undefined) csvCache.set(key, (text = make()));
  return text;
}
const planCsv = (tasks: number) => cached(`plan-${tasks}`, () => generateDag({ tasks, meanDeps: kMeanDeps, seed: kPlanSeed }));
const runCsv = (tasks: number) => cached(`run-${tasks}`, () => generateLayeredDag({ tasks, layers: kWaves, minDeps: 1, maxDeps: 1, seed: kRunSeed }));

let counter = 0;

async function planOnce(scratch: string, rssMethod: RssMethod, tasks: number): Promise<Measure> {
  const dir = writeSession(join(scratch, `plan-${tasks}-${++counter}`), planCsv(tasks));
  const measure = await timed({ node: ['plan', dir] }, { cwd: scratch, scratch, rssMethod });
  await checkPlan(measure, join(dir, 'tasks.csv'), planCsv(tasks));
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

async function runOnce(scratch: string, rssMethod: RssMethod, modulePath: string, tasks: number, label: string): Promise<RunResult['runs'][number]> {
  const dir = writeSession(join(scratch, `run-${tasks}-${++counter}`), runCsv(tasks));
  const watch = watchSession(dir);
  let nextReport = 15_000;
  const measure = await timed(
    { node: ['run', dir, '--module', modulePath, '--concurrency', String(kConcurrency), '--json'] },
    {
      cwd: scratch,
      scratch,
      rssMethod,
      poll: {
        intervalMs: 250,
        tick: (elapsedMs) => {
          watch.tick();
          if (elapsedMs >= nextReport) {
            nextReport += 15_000;
            console.log(`  ${label}: ${Math.round(elapsedMs / 1000)} s, wave ${watch.waves}/${kWaves} started, tasks.csv rewritten ${watch.rewrites} times`);
          }
        },
      },
    },
  );
  watch.tick();
  const { summary } = await checkRun(measure, dir, tasks, label);
  rmSync(dir, { recursive: true, force: true });
  return { measure, engineMs: summary.durationMs, rewrites: watch.rewrites };
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: { ...kCommonOptions, big: { type: 'string' }, 'big-runs': { type: 'string' }, 'profile-size': { type: 'string' } },
    strict: true,
  });
  const common = commonOptions(values);
  const big = Number(values.big ?? (common.quick ? 100_000 : 1_000_000));
  if (!Number.isInteger(big) || big < 100_000 || big > 9_999_999) fail('--big must be an integer from 100,000 to 9,999,999');
  const planSizes = common.quick ? [10_000, 100_000] : [...new Set([100_000, big])];
  const runSizes = common.quick ? [10_000, 100_000] : [...new Set([10_000, 100_000, big])];
  const bigRuns = Number(values['big-runs'] ?? common.runs);
  if (!Number.isInteger(bigRuns) || bigRuns < 1) fail('--big-runs must be a positive integer');
  const profileSize = Number(values['profile-size'] ?? big);
  if (!Number.isInteger(profileSize) || profileSize < 1) fail('--profile-size must be a positive integer');
  return { ...common, planSizes, runSizes, bigRuns, profileSize };
}

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-scale-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const modulePath = join(scratch, 'noop.mjs');
    writeFileSync(modulePath, kNoopModule);
    const biggest = Math.max(...options.runSizes);
    console.log(
      `scratch ${scratch}; plan at ${options.planSizes.map(thousands).join(', ')}; run at ${options.runSizes.map(thousands).join(', ')}; ` +
        `${options.runs} run(s) per size (${options.bigRuns} at ${thousands(biggest)})`,
    );
    await runOnce(scratch, rssMethod, modulePath, 1000, 'warm-up');

    const plans: PlanResult[] = options.planSizes.map((tasks) => ({ tasks, bytes: Buffer.byteLength(planCsv(tasks)), runs: [] }));
    const runs: RunResult[] = options.runSizes.map((tasks) => ({ tasks, runs: [] }));
    const rounds = Math.max(options.runs, options.bigRuns);
    for (let round = 1; round <= rounds; round++) {
      // Interleaved: every size once per round, so that drift falls on all of them.
      for (const plan of plans) {
        if (round > (plan.tasks === biggest ? options.bigRuns : options.runs)) continue;
        const measure = await planOnce(scratch, rssMethod, plan.tasks);
        plan.runs.push(measure);
        console.log(`round ${round}: plan ${thousands(plan.tasks)} ${fixed(measure.seconds)} s, peak ${megabytes(measure.maxRssKb)} MB`);
      }
      for (const run of runs) {
        if (round > (run.tasks === biggest ? options.bigRuns : options.runs)) continue;
        const result = await runOnce(scratch, rssMethod, modulePath, run.tasks, `run ${thousands(run.tasks)} (round ${round})`);
        run.runs.push(result);
        console.log(
          `round ${round}: run ${thousands(run.tasks)} ${fixed(result.measure.seconds)} s (engine ${fixed(result.engineMs / 1000)} s, ` +
            `${thousands(run.tasks / result.measure.seconds)} tasks/s), peak ${megabytes(result.measure.maxRssKb)} MB, ${result.rewrites} tasks.csv rewrites seen`,
        );
      }
    }

    const profiles: ProfiledRun[] = [];
    if (options.profile) {
      const planSize = Math.min(options.profileSize, Math.max(...options.planSizes));
      const planDir = writeSession(join(scratch, 'profiled-plan'), planCsv(planSize));
      const plan = await profileCli(`one ${thousands(planSize)}-task plan`, planSize, ['plan', planDir], { cwd: scratch, scratch });
      await checkPlan(plan.measure, join(planDir, 'tasks.csv'), planCsv(planSize));
      rmSync(planDir, { recursive: true, force: true });
      profiles.push(plan);
      const runSize = Math.min(options.profileSize, biggest);
      const runDir = writeSession(join(scratch, 'profiled-run'), runCsv(runSize));
      const args = ['run', runDir, '--module', modulePath, '--concurrency', String(kConcurrency), '--json'];
      const run = await profileCli(`one ${thousands(runSize)}-task no-op run in ${kWaves} waves, concurrency ${kConcurrency}`, runSize, args, { cwd: scratch, scratch });
      await checkRun(run.measure, runDir, runSize, 'profiled run');
      rmSync(runDir, { recursive: true, force: true });
      profiles.push(run);
      for (const profile of profiles) for (const line of topCostLines(profile)) console.log(line);
    }

    // Figures and goals.
    const wall = (measures: readonly Measure[]) => median(measures.map((m) => m.seconds));
    const peakKb = (measures: readonly Measure[]) => Math.max(...measures.map((m) => m.maxRssKb));
    const engine = (result: RunResult) => median(result.runs.map((r) => r.engineMs)) / 1000;
    const runWall = (result: RunResult) => wall(result.runs.map((r) => r.measure));
    const runOf = (tasks: number) => runs.find((r) => r.tasks === tasks)!;
    const bigPlan = plans[plans.length - 1]!;
    const smallPlan = plans[plans.length - 2] ?? plans[0]!;
    const bigRun = runs[runs.length - 1]!;
    const midRun = runs[runs.length - 2] ?? runs[0]!;
    const scaleLabel = `${thousands(bigRun.tasks)}/${thousands(midRun.tasks)}`;
    const planRatio = wall(bigPlan.runs) / wall(smallPlan.runs);
    const runRatio = engine(bigRun) / engine(midRun);
    const runWallRatio = runWall(bigRun) / runWall(midRun);
    const merge = { small: runOf(10_000), large: runOf(100_000) };
    const perTask = (result: RunResult, of: (r: RunResult) => number) => (1000 * of(result)) / result.tasks;
    const mergeRatio = perTask(merge.large, engine) / perTask(merge.small, engine);
    const mergeWallRatio = perTask(merge.large, runWall) / perTask(merge.small, runWall);
    const standIn = bigPlan.tasks < 1_000_000 ? ` (stand-in at ${thousands(bigPlan.tasks)}: --quick or --big)` : '';
    const goals: [string, string, boolean][] = [
      [
        `plan ${thousands(bigPlan.tasks)} tasks (mean ${kMeanDeps} deps) in under ${kGoalPlanBytes / 1e9} GB (${kGoalPlanBytes / 1e9}·10^9 bytes)${standIn}`,
        `${megabytes(peakKb(bigPlan.runs))} MB, ${fixed(wall(bigPlan.runs))} s`,
        peakKb(bigPlan.runs) * 1024 < kGoalPlanBytes,
      ],
      [
        `plan time ${thousands(bigPlan.tasks)}/${thousands(smallPlan.tasks)} at most ${kGoalPlanRatio}`,
        `${fixed(planRatio)} (${fixed(wall(bigPlan.runs))} s / ${fixed(wall(smallPlan.runs))} s)`,
        planRatio <= kGoalPlanRatio,
      ],
      [
        `run ${thousands(bigRun.tasks)} no-op tasks to completion, tasks.csv written; time ${scaleLabel} at most ${kGoalRunRatio} (engine durationMs)`,
        `${fixed(runRatio)} (${fixed(engine(bigRun))} s / ${fixed(engine(midRun))} s; end to end ${fixed(runWallRatio)})`,
        runRatio <= kGoalRunRatio,
      ],
      [
        `merge-back: time per task at 100,000 rows at most ${kGoalMergeRatio} × that at 10,000 (engine durationMs)`,
        `${fixed(mergeRatio)} (${fixed(perTask(merge.large, engine), 3)} / ${fixed(perTask(merge.small, engine), 3)} ms; end to end ${fixed(mergeWallRatio)})`,
        mergeRatio <= kGoalMergeRatio,
      ],
    ];

    const lines: string[] = [];
    lines.push('## Scale: a million tasks, and merge-back per task', '');
    lines.push(
      `Plan: \`csv-wave plan\` on random DAGs (\`scripts/gen-dag.ts\`, mean ${kMeanDeps} deps, seed ${kPlanSeed}) of ${options.planSizes.map(thousands).join(' and ')} tasks. ` +
        `Run: \`csv-wave run --module noop.mjs --concurrency ${kConcurrency}\` on ${kWaves}-wave sessions (\`generateLayeredDag\`: each task depends on one ` +
        `task of the wave before; seed ${kRunSeed}) of ${options.runSizes.map(thousands).join(', ')} tasks. Each is a child process of the built CLI, in a fresh ` +
        'session folder, checked afterwards (plan: every wave cell right, every other cell as it was; run: summary, every tasks.csv row completed, journal whole, ' +
        `no discovery file for plain results). Sizes interleaved round by round; ${options.runs} run(s) per size (${options.bigRuns} at ${thousands(biggest)}); medians (min–max).`,
      '',
    );
    lines.push(...machineLines('scripts/bench/scale.ts', 'bench:scale', loadAtStart, [`- Peak memory: maximum resident set size of the CLI process (worker threads included), ${rssMethodText(rssMethod)}`]), '');
    lines.push('| command | tasks | file MB | wall s, median (min–max) | engine s (durationMs) | tasks/s | CPU s | peak MB | tasks.csv rewrites seen |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const plan of plans) {
      lines.push(
        `| plan | ${thousands(plan.tasks)} | ${(plan.bytes / 2 ** 20).toFixed(1)} | ${spread(plan.runs.map((m) => m.seconds))} | – | ${thousands(plan.tasks / wall(plan.runs))} | ` +
          `${fixed(median(plan.runs.map((m) => m.cpuSeconds)))} | ${megabytes(peakKb(plan.runs))} | – |`,
      );
    }
    for (const run of runs) {
      lines.push(
        `| run | ${thousands(run.tasks)} | ${(Buffer.byteLength(runCsv(run.tasks)) / 2 ** 20).toFixed(1)} | ${spread(run.runs.map((r) => r.measure.seconds))} | ${fixed(engine(run))} | ` +
          `${thousands(run.tasks / runWall(run))} | ${fixed(median(run.runs.map((r) => r.measure.cpuSeconds)))} | ${megabytes(peakKb(run.runs.map((r) => r.measure)))} | ` +
          `${median(run.runs.map((r) => r.rewrites))} |`,
      );
    }
    lines.push('');
    const memoryRatio = (big: readonly Measure[], small: readonly Measure[]) => fixed(peakKb(big) / peakKb(small));
    lines.push(
      `Ratios inside this run: plan ${thousands(bigPlan.tasks)}/${thousands(smallPlan.tasks)} time ${fixed(planRatio)}, peak memory ${memoryRatio(bigPlan.runs, smallPlan.runs)}; ` +
        `run ${scaleLabel} time ${fixed(runRatio)} from durationMs (${fixed(runWallRatio)} end to end), peak memory ` +
        `${memoryRatio(bigRun.runs.map((r) => r.measure), midRun.runs.map((r) => r.measure))} (linear is ${fixed(bigRun.tasks / midRun.tasks, 0)}). ` +
        `Time per task of a run: ${runs.map((r) => `${fixed(perTask(r, engine), 3)} ms at ${thousands(r.tasks)}`).join(', ')} (durationMs); ` +
        `${runs.map((r) => `${fixed(perTask(r, runWall), 3)} ms`).join(', ')} end to end.`,
      '',
    );
    lines.push(...goalTable(goals), '');
    if (profiles.length > 0) {
      lines.push('### Top three remaining costs', '', kProfileMethod, '');
      for (const profile of profiles) lines.push(...topCostLines(profile), '');
      lines.push('### Self time per thread', '');
      for (const profile of profiles) lines.push(`#### ${profile.label}`, '', ...threadTables(profile));
    }
    publish('scale', lines.join('\n'), options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/scale.ts [--big 1000000] [--big-runs N] [--profile-size N] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:scale', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
