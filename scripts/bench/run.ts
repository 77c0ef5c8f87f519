/**
 * Run-engine benchmark (`npm run bench:run`): times `csv-wave run` end to end, as a child
 * process of the built CLI (dist/cli/bin.js), and records the figures in BENCHMARKS.md
 * between the markers `<!-- bench:run -->` and `<!-- /bench:run -->`. The goals (issue 12):
 *
 *   1. Process tasks vs GNU parallel and xargs: 5,000 rows running `true` at concurrency 4
 *      take at most 0.6 times as long as GNU parallel on the same rows (`parallel -j4
 *      --joblog FILE -a IDS …`, its output to a file), and at most 2.5 times as long as
 *      `xargs -P4` running the same `/bin/sh -c` commands (the floor a user can see);
 *      5,000 rows running a command that prints 1 KB (`printf '%01023d\n' 0`) at most 0.8
 *      times parallel (xargs reported beside it). csv-wave's tasks.csv and journal are
 *      complete. The runs are interleaved (csv-wave, parallel, xargs, csv-wave, …) so that
 *      drift cancels.
 *   2. In-process tasks: 100,000 no-op module tasks in 10 waves (each task depends on one
 *      of the wave before) at concurrency 64 run at 25,000 tasks/s or more, end to end
 *      (node start-up, validation, journal and tasks.csv included), with the run engine's
 *      durability as it is (a watcher counts the tasks.csv rewrites and the journal's size
 *      during the run), and within 2 times the wall time of a raw piscina loop making the
 *      same calls one message per task (raw-piscina/loop.mjs: the same thread count, 10
 *      awaited waves, at most 64 in flight), run interleaved with it. That run also peaks
 *      under 1 GB of memory.
 *   Kept from the first version: 20,000 and 2,000 no-op tasks in one wave at concurrency
 *   64 (time per task at 20,000 at most 1.3 times that at 2,000) and 20,000 at 2.
 *
 *   npx tsx scripts/bench/run.ts [--quick] [--runs N] [--dir PATH] [--no-profile]
 *                                [--write | --no-write] [--no-build] [--keep]
 *
 * --quick: a tenth of every size, 2 runs per measure, and BENCHMARKS.md is not written
 * unless --write is given (documented figures are medians of at least 5 runs).
 * --dir: where the session folders go (default: the system temp folder); file creation
 * speed there matters, since a run writes one discoveries/<id>.json per task.
 *
 * Every run gets a fresh session folder (outputs removed afterwards) and is checked: exit
 * code 0, the --json summary and tasks.csv both say every task completed, the journal is
 * there and whole, and no discovery file was written for these plain results (GNU parallel: its joblog has
 * one line per row, all with exit value 0, and its output file the expected size; xargs: exit 0 and
 * the output size; the raw loop: exit 0 and every reply checked).
 * Unless --no-profile, one run of each case is profiled with `node --cpu-prof` (main and
 * worker threads), for the top three remaining costs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateDag, generateLayeredDag } from '../gen-dag.js';
import { parallelArgs, runParallel, runRawLoop, runXargs, xargsArgs, type BaselineOptions, type RawLoopRun } from './baselines.js';
import {
  checkRun,
  commonOptions,
  detectRssMethod,
  ensureBuilt,
  fail,
  fileCreationMs,
  fixed,
  goalTable,
  isMain,
  kCommonOptions,
  kCommonUsage,
  loadAverage,
  machineLines,
  median,
  megabytes,
  parallelVersion,
  percent,
  printGoal,
  publish,
  readTasksCsv,
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
  type RunSummaryJson,
} from './lib.js';
import { kProfileMethod, profileCli, threadTables, topCostLines, type ProfiledRun, type ThreadKind, type ThreadSummary } from './profile.js';

const kSeed = 7;
const kCommandConcurrency = 4;
/** csv-wave/xargs wall time for `true`: xargs is the floor a user can see. */
const kGoalXargsRatio = 2.5;
const kModuleConcurrency = 64;
const kModuleLowConcurrency = 2;
const kWaves = 10;
const kGoalTasksPerSecond = 25_000;
/** csv-wave/raw piscina loop wall time for the module tasks in waves. */
const kGoalRawRatio = 2;
const kGoalPerTaskRatio = 1.3;
const kGoalMemoryBytes = 1e9;
const kNoopModule = "export default async () => ({findings: ''});\n";

/**
 * The two command cases: the same shell command for csv-wave, GNU parallel and xargs, and
 * the goals: csv-wave/parallel wall time, and csv-wave/xargs (only `true` has one).
 */
const kCommands = [
  { key: 'true', label: '`true`', command: 'true', outputBytes: 0, goalParallel: 0.6, goalXargs: kGoalXargsRatio },
  { key: 'print1k', label: "`printf '%01023d\\n' 0` (prints 1 KB)", command: "printf '%01023d\\n' 0", outputBytes: 1024, goalParallel: 0.8, goalXargs: undefined },
] as const;
type CommandKey = (typeof kCommands)[number]['key'];

interface Sizes {
  command: number;
  waves: number;
  module: number;
  moduleSmall: number;
}

interface Options extends CommonOptions {
  sizes: Sizes;
}

interface Run {
  measure: Measure;
  summary: RunSummaryJson;
  rewrites: number;
  journalPeakBytes: number;
}

interface Results {
  rssMethod: RssMethod;
  startup: Measure[];
  fileCreateMs: number[];
  command: Record<CommandKey, { ours: Run[]; parallel: Measure[]; xargs: Measure[] }>;
  waves: Run[];
  /** The raw piscina loop on the same waves, interleaved with `waves`. */
  raw: RawLoopRun[];
  /** The raw loop's pool threads: csv-wave's default for the module run. */
  rawThreads: number;
  module: { big: Run[]; small: Run[]; low: Run[] };
  profiles: ProfiledRun[];
}

let sessionCounter = 0;
const csvCache = new Map<string, string>();

/** Independent tasks (one wave), or `kWaves` layers each task depending on one task of the layer before. */
function tasksCsv(tasks: number, waves: number): string {
  const key = `${tasks}/${waves}`;
  let text = csvCache.get(key);
  if (text === undefined) {
    text = waves === 1 ? generateDag({ tasks, meanDeps: 0, seed: kSeed }) : generateLayeredDag({ tasks, layers: waves, minDeps: 1, maxDeps: 1, seed: kSeed });
    csvCache.set(key, text);
  }
  return text;
}

async function runCsvWave(
  root: string,
  rssMethod: RssMethod,
  tasks: number,
  waves: number,
  executorArgs: string[],
  concurrency: number,
  check?: (dir: string) => Promise<void>,
): Promise<Run> {
  const dir = writeSession(join(root, `session-${tasks}-${++sessionCounter}`), tasksCsv(tasks, waves));
  const watch = watchSession(dir);
  const measure = await timed(
    { node: ['run', dir, ...executorArgs, '--concurrency', String(concurrency), '--json'] },
    { cwd: root, scratch: root, rssMethod, poll: { intervalMs: 100, tick: watch.tick } },
  );
  watch.tick();
  const what = `csv-wave run (${tasks} tasks, ${waves} wave(s), ${executorArgs.join(' ')}, concurrency ${concurrency})`;
  const { summary } = await checkRun(measure, dir, tasks, what);
  await check?.(dir);
  rmSync(dir, { recursive: true, force: true });
  return { measure, summary, rewrites: watch.rewrites, journalPeakBytes: watch.journalPeakBytes };
}

/**
 * Every task's whole output (the 1,023 characters printf prints, its newline trimmed) must
 * be kept: today as findings cut to the cell plus the whole of it in
 * artifacts/<id>/output.md (README: findings over 500 characters); a findings cell that
 * holds all of it passes too, so that the check does not pin where long findings go.
 */
function checkOutputs(command: (typeof kCommands)[number]): (dir: string) => Promise<void> {
  const whole = '0'.repeat(command.outputBytes - 1);
  return async (dir) => {
    let missing = 0;
    let first = '';
    await readTasksCsv(join(dir, 'tasks.csv'), (row) => {
      const id = row['id'] ?? '';
      const artifact = join(dir, 'artifacts', id, 'output.md');
      const kept = row['findings'] === whole || (existsSync(artifact) && readFileSync(artifact, 'utf8').trim() === whole);
      if (!kept && missing++ === 0) first = id;
    });
    if (missing > 0) fail(`the 1 KB run lost the whole output of ${missing} task(s), such as ${first} (neither its findings nor artifacts/${first}/output.md hold it)`);
  };
}

// ---------------------------------------------------------------------------------------
// The report

const secondsOf = (runs: readonly { measure: Measure }[]) => runs.map((run) => run.measure.seconds);
const enginesOf = (runs: readonly Run[]) => runs.map((run) => run.summary.durationMs / 1000);
const peakMb = (measures: readonly Measure[]) => megabytes(Math.max(...measures.map((m) => m.maxRssKb)));

const sumMs = (threads: ThreadSummary[], name: (row: { name: string }) => boolean) =>
  threads.reduce((total, thread) => total + thread.selfByFunction.filter(name).reduce((sum, row) => sum + row.ms, 0), 0);

/**
 * Causes read from these profiles and from the hot code, printed only while the profile
 * still shows them (so that the text does not outlive a fix).
 */
function knownCauses(profiles: ProfiledRun[]): string[] {
  const notes: string[] = [];
  const kindText: Record<ThreadKind, string> = { main: "the CLI's main thread", worker: "the CLI's worker threads", process: 'other node processes (a launcher)' };
  for (const profile of profiles) {
    const main = profile.threads.find((thread) => thread.kind === 'main');
    // Commands are spawned wherever the code puts it: worker threads, a launcher process, the main thread.
    const busy = profile.threads.reduce((sum, thread) => sum + thread.busyMs, 0);
    const spawnByKind = (['worker', 'process', 'main'] as const).map((kind) => ({
      kind,
      ms: sumMs(profile.threads.filter((thread) => thread.kind === kind), (row) => /^(ChildProcess\.spawn|spawn) \(/.test(row.name)),
    }));
    const spawnMs = spawnByKind.reduce((sum, entry) => sum + entry.ms, 0);
    if (busy > 0 && spawnMs / busy >= 0.15) {
      const [most] = [...spawnByKind].sort((a, b) => b.ms - a.ms);
      const where = spawnByKind.filter((entry) => entry.ms > 0).map((entry) => `${kindText[entry.kind]} ${thousands(entry.ms)} ms`).join(', ');
      const why =
        most!.kind === 'process'
          ? 'from a process of its own, what is left is the fork and exec of `/bin/sh` per task'
          : "libuv forks the CLI's whole process (its heaps, the other isolates, every thread's mappings) and blocks the calling thread until the child has exec'd";
      notes.push(
        `- ${profile.label}: \`spawn\` takes ${percent(spawnMs, busy)} of the sampled CPU time (${where}; ${fixed(spawnMs / profile.tasks, 2)} ms per task; ` +
          `the profiler's signals make fork() slower still): ${why}.`,
      );
    }
    const executorMs = sumMs(profile.threads, (row) => row.name.startsWith('(anonymous) (src/executors/command.ts:'));
    if (busy > 0 && executorMs / busy >= 0.02) {
      notes.push(
        `- ${profile.label}: the promise executor of \`CommandExecutor.run\` (src/executors/command.ts) has ${percent(executorMs, busy)} ` +
          'of the sampled self time, most likely the `{...process.env, …}` copy per task (process.env is backed by C++ interceptors: spreading ' +
          'it reads every variable each time).',
      );
    }
    if (main && main.wallMs > 0 && main.busyMs > 0) {
      const rewrite = main.selfByFunction.filter((row) => row.name.includes('csv-stringify/')).reduce((sum, row) => sum + row.ms, 0);
      const post = main.selfByFunction.filter((row) => /^(postTask|postMessage) /.test(row.name)).reduce((sum, row) => sum + row.ms, 0);
      const pieces: string[] = [];
      if (rewrite / main.busyMs >= 0.1) {
        pieces.push(`csv-stringify (the periodic rewrites of tasks.csv: \`checkpoint\` in src/run/run-session.ts) ${percent(rewrite, main.busyMs)}`);
      }
      if (post / main.busyMs >= 0.1) pieces.push(`handing tasks to piscina (\`postTask\`, \`postMessage\`) ${percent(post, main.busyMs)}`);
      // The workers write nothing: each task's discovery file and long output are created here.
      const fileWrites = sumMs([main], (row) => /^(writeFileUtf8|open|mkdir|close) \(native\)$/.test(row.name));
      if (fileWrites / main.busyMs >= 0.1) {
        pieces.push(
          `synchronous file creation (\`writeFileUtf8\`, \`mkdir\`: \`writeAttemptFiles\` in src/run/record/attempt-files.ts writes a new ` +
            `\`discoveries/<id>.json\` and, for a long output, an artifact per task) ${percent(fileWrites, main.busyMs)}`,
        );
      }
      if (main.gcMs / main.busyMs >= 0.15) pieces.push(`garbage collection ${percent(main.gcMs, main.busyMs)}`);
      const saturated = main.busyMs / main.wallMs >= 0.8;
      if (pieces.length > 0 || saturated) {
        notes.push(
          `- ${profile.label}: the main thread is busy ${percent(main.busyMs, main.wallMs)} of the run` +
            `${saturated ? ', so it is the limit, not the workers' : ' (not the limit, but it shares the cores with the workers)'}` +
            `${pieces.length > 0 ? `; of its busy time: ${pieces.join(', ')}` : ''}.`,
        );
      }
    }
  }
  return notes;
}

function renderSection(options: Options, results: Results, loadAtStart: string): { section: string; goals: [string, string, boolean][] } {
  const { sizes } = options;
  const cores = availableParallelism();
  const lines: string[] = [];
  lines.push('## Run: command and module executors end to end', '');
  lines.push(
    'Each run is a child process of the built CLI (`node dist/cli/bin.js run <session> … --json`); wall time is measured ' +
      'around it, so it includes node start-up, validation, the journal and the tasks.csv rewrites. ' +
      `Sessions: independent tasks (\`scripts/gen-dag.ts\` with mean deps 0: one wave), or ${kWaves} layers in which each task ` +
      `depends on one task of the layer before (\`generateLayeredDag\`: ${kWaves} waves). Every run gets a fresh session folder ` +
      '(outputs removed afterwards) and is checked: exit code 0, the summary and tasks.csv show every task completed, the ' +
      'journal is there and whole, and no discovery file was written (plain results of a generic session). A watcher stats tasks.csv and the journal every 100 ms ' +
      `during the run. ${options.runs} run(s) per measure, interleaved so that the machine's drift cancels; figures are medians (min–max).`,
    '',
  );
  lines.push(
    ...machineLines('scripts/bench/run.ts', 'bench:run', loadAtStart, [
      `- ${parallelVersion() ?? 'GNU parallel not found'}`,
      `- Peak memory: maximum resident set size of the CLI process (worker threads included; a child process of its own, ` +
        `such as a launcher of commands, counts apart: GNU time reports the largest process), ${rssMethodText(results.rssMethod)}; ` +
        'CPU s: user + system time of the process and of the child processes it waited for (GNU time), or of the process alone (without it)',
      `- Fixed cost: \`csv-wave --version\` (node start-up + loading the CLI) takes ${fixed(median(results.startup.map((m) => m.seconds)))} s; ` +
        `creating one small file in the scratch folder takes ${spread(results.fileCreateMs, 3)} ms (probed between rounds; a command whose findings go to an artifact creates two files: the artifact and its discoveries/<id>.json)`,
    ]),
  );
  lines.push('');

  lines.push('| run | tasks | waves | concurrency | wall s, median (min–max) | tasks/s | engine s (summary durationMs) | CPU s | peak MB | tasks.csv rewrites seen | journal peak KB |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const row = (label: string, tasks: number, waves: number, concurrency: number, runs: Run[]) =>
    `| ${label} | ${thousands(tasks)} | ${waves} | ${concurrency} | ${spread(secondsOf(runs))} | ${thousands(tasks / median(secondsOf(runs)))} | ` +
    `${fixed(median(enginesOf(runs)))} | ${fixed(median(runs.map((r) => r.measure.cpuSeconds)))} | ${peakMb(runs.map((r) => r.measure))} | ` +
    `${median(runs.map((r) => r.rewrites))} | ${thousands(median(runs.map((r) => r.journalPeakBytes)) / 1024)} |`;
  /** A row for another tool: no engine time, rewrites or journal. */
  const baselineRow = (label: string, tasks: number, waves: string, concurrency: number, measures: Measure[], own = '–') =>
    `| ${label} | ${thousands(tasks)} | ${waves} | ${concurrency} | ${spread(measures.map((m) => m.seconds))} | ` +
    `${thousands(tasks / median(measures.map((m) => m.seconds)))} | ${own} | ${fixed(median(measures.map((m) => m.cpuSeconds)))} | ${peakMb(measures)} | – | – |`;
  // As a shell would take it: an argument with spaces or quotes in double quotes.
  const shellWord = (arg: string) => (/[\s'"]/.test(arg) ? `"${arg.replace(/["$`]/g, '\\$&')}"` : arg);
  const code = (args: string[]) => `\`${args.map(shellWord).join(' ').replaceAll('|', '\\|')}\``;
  for (const command of kCommands) {
    const { ours, parallel, xargs } = results.command[command.key];
    lines.push(row(`csv-wave \`--cmd\` ${command.label}`, sizes.command, 1, kCommandConcurrency, ours));
    lines.push(baselineRow(`GNU parallel ${code(parallelArgs(command, kCommandConcurrency).slice(1, -1))} ${command.label}, output to a file`, sizes.command, '–', kCommandConcurrency, parallel));
    lines.push(baselineRow(`${code(xargsArgs(command, kCommandConcurrency))}, output to a file`, sizes.command, '–', kCommandConcurrency, xargs));
  }
  lines.push(row('csv-wave `--module noop.mjs`', sizes.waves, kWaves, kModuleConcurrency, results.waves));
  lines.push(
    baselineRow(
      `raw piscina loop (\`node scripts/bench/raw-piscina/loop.mjs\`, ${results.rawThreads} threads, one message per task); ` +
        "its own time from the pool's creation to the last reply in the engine column",
      sizes.waves,
      String(kWaves),
      kModuleConcurrency,
      results.raw.map((r) => r.measure),
      fixed(median(results.raw.map((r) => r.loopMs / 1000))),
    ),
  );
  lines.push(row('csv-wave `--module noop.mjs`', sizes.module, 1, kModuleConcurrency, results.module.big));
  lines.push(row('csv-wave `--module noop.mjs`', sizes.moduleSmall, 1, kModuleConcurrency, results.module.small));
  lines.push(row('csv-wave `--module noop.mjs`', sizes.module, 1, kModuleLowConcurrency, results.module.low));
  lines.push('');

  /** Ratio of the medians, and the median of the per-pair ratios (each pair ran back to back). */
  const ratio = (ours: readonly number[], theirs: readonly number[]) => ({
    ours: median(ours),
    theirs: median(theirs),
    ofMedians: median(ours) / median(theirs),
    pair: median(ours.map((value, i) => value / theirs[i]!)),
  });
  const ratioText = (r: ReturnType<typeof ratio>) => `${fixed(r.ofMedians)} (${fixed(r.ours)} s / ${fixed(r.theirs)} s; per-pair median ${fixed(r.pair)})`;
  const commandRatios = (key: CommandKey) => {
    const { ours, parallel, xargs } = results.command[key];
    const seconds = secondsOf(ours);
    return { parallel: ratio(seconds, parallel.map((m) => m.seconds)), xargs: ratio(seconds, xargs.map((m) => m.seconds)) };
  };
  const rawRatio = ratio(secondsOf(results.waves), results.raw.map((r) => r.measure.seconds));
  const rawCpuRatio = median(results.waves.map((r) => r.measure.cpuSeconds)) / median(results.raw.map((r) => r.measure.cpuSeconds));
  const perTask = (runs: Run[], tasks: number) => (1000 * median(secondsOf(runs))) / tasks;
  const perTaskRatio = perTask(results.module.big, sizes.module) / perTask(results.module.small, sizes.moduleSmall);
  const perTaskEngineRatio = median(enginesOf(results.module.big)) / sizes.module / (median(enginesOf(results.module.small)) / sizes.moduleSmall);
  const wavesPerSecond = sizes.waves / median(secondsOf(results.waves));
  const wavesEnginePerSecond = sizes.waves / median(enginesOf(results.waves));
  const rawPerSecond = sizes.waves / median(results.raw.map((r) => r.measure.seconds));
  const wavesPeakKb = Math.max(...results.waves.map((r) => r.measure.maxRssKb));
  lines.push(
    `The worker pool has the default \`--threads\`: 1 thread for the commands, min(concurrency, cores) = ` +
      `${Math.min(kModuleConcurrency, cores)} for the modules at concurrency ${kModuleConcurrency}. ` +
      kCommands
        .map((command) => {
          const r = commandRatios(command.key);
          return `${command.label}: csv-wave/parallel ${fixed(r.parallel.ofMedians)} (per-pair median ${fixed(r.parallel.pair)}), csv-wave/xargs ${fixed(r.xargs.ofMedians)} (per-pair median ${fixed(r.xargs.pair)})`;
        })
        .join('; ') +
      `. ${thousands(sizes.waves)} tasks in ${kWaves} waves: ${thousands(wavesPerSecond)} tasks/s end to end, ${thousands(wavesEnginePerSecond)} tasks/s ` +
      `from the engine's own durationMs (without node start-up); tasks.csv was seen rewritten ${median(results.waves.map((r) => r.rewrites))} times during the run ` +
      `and the journal held up to ${thousands(median(results.waves.map((r) => r.journalPeakBytes)) / 1024)} KB (median). ` +
      `The raw piscina loop on the same ${thousands(sizes.waves)} calls (${results.rawThreads} threads taking ${Math.ceil(kModuleConcurrency / results.rawThreads)} tasks each at once, ` +
      `at most ${kModuleConcurrency} in flight, each of the ${kWaves} waves awaited) runs at ${thousands(rawPerSecond)} tasks/s end to end; csv-wave/raw: ` +
      `wall ${ratioText(rawRatio)}, CPU ${fixed(rawCpuRatio)}. ` +
      `Time per task at ${thousands(sizes.module)} vs ${thousands(sizes.moduleSmall)} rows: ${fixed(perTaskRatio)} end to end, ${fixed(perTaskEngineRatio)} ` +
      'from durationMs (both sizes carry the same fixed start-up cost, which flatters the larger one).',
    '',
  );

  const goals: [string, string, boolean][] = [];
  for (const command of kCommands) {
    const r = commandRatios(command.key);
    goals.push([
      `${thousands(sizes.command)} ${command.label} commands at concurrency ${kCommandConcurrency}: csv-wave/GNU parallel wall time at most ${command.goalParallel}`,
      ratioText(r.parallel),
      r.parallel.ofMedians <= command.goalParallel,
    ]);
    if (command.goalXargs !== undefined) {
      goals.push([
        `${thousands(sizes.command)} ${command.label} commands at concurrency ${kCommandConcurrency}: csv-wave/\`xargs -P${kCommandConcurrency}\` wall time at most ${command.goalXargs}`,
        ratioText(r.xargs),
        r.xargs.ofMedians <= command.goalXargs,
      ]);
    }
  }
  goals.push([
    `${thousands(sizes.waves)} no-op module tasks in ${kWaves} waves: at least ${thousands(kGoalTasksPerSecond)} tasks/s end to end, journal and periodic tasks.csv as they are`,
    `${thousands(wavesPerSecond)} tasks/s (${fixed(wavesPerSecond / kGoalTasksPerSecond)} of the goal)`,
    wavesPerSecond >= kGoalTasksPerSecond,
  ]);
  goals.push([
    `the same run: csv-wave/raw piscina loop (one message per task) wall time at most ${kGoalRawRatio}`,
    ratioText(rawRatio),
    rawRatio.ofMedians <= kGoalRawRatio,
  ]);
  goals.push([
    `${thousands(sizes.waves)}-task no-op module run peaks under 1 GB (10^9 bytes)`,
    `${megabytes(wavesPeakKb)} MB`,
    wavesPeakKb * 1024 < kGoalMemoryBytes,
  ]);
  goals.push([
    `time per task at ${thousands(sizes.module)} rows / at ${thousands(sizes.moduleSmall)} rows at most ${kGoalPerTaskRatio}`,
    fixed(perTaskRatio),
    perTaskRatio <= kGoalPerTaskRatio,
  ]);
  lines.push(...goalTable(goals), '');

  if (results.profiles.length > 0) {
    lines.push('### Top three remaining costs', '');
    lines.push(kProfileMethod, '');
    for (const profile of results.profiles) lines.push(...topCostLines(profile), '');
    const causes = knownCauses(results.profiles);
    if (causes.length > 0) lines.push('Why, from the profiles and the hot code:', '', ...causes, '');
    lines.push('### Self time per thread', '');
    for (const profile of results.profiles) {
      lines.push(`#### ${profile.label}`, '', ...threadTables(profile));
    }
  }
  return { section: lines.join('\n').trimEnd(), goals };
}

// ---------------------------------------------------------------------------------------

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({ args: argv, options: kCommonOptions, strict: true });
  const common = commonOptions(values);
  const scale = common.quick ? 10 : 1;
  return {
    ...common,
    sizes: { command: 5_000 / scale, waves: 100_000 / scale, module: 20_000 / scale, moduleSmall: 2_000 / scale },
  };
}

async function benchmark(options: Options): Promise<void> {
  if (parallelVersion() === undefined) {
    fail(
      'GNU parallel is not installed; the command benchmark compares against it. Install it with\n' +
        '  sudo apt-get update && sudo apt-get install -y parallel     (Debian/Ubuntu)\n' +
        '  brew install parallel                                       (macOS)\n' +
        'and run this script again.',
    );
  }
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const { sizes } = options;
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-run-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const log = (message: string) => console.log(message);
    log(`scratch ${scratch}; peak memory via ${rssMethod}; ${options.runs} run(s) per measure${options.quick ? ' (--quick: a tenth of the sizes)' : ''}`);
    const modulePath = join(scratch, 'noop.mjs');
    writeFileSync(modulePath, kNoopModule);
    const moduleArgs = ['--module', modulePath];
    const startup: Measure[] = [];
    for (let i = 0; i < options.runs; i++) startup.push(await timed({ node: ['--version'] }, { cwd: scratch, scratch, rssMethod }));
    const fileCreateMs = [fileCreationMs(scratch)];
    log(`start-up (--version) median ${fixed(median(startup.map((m) => m.seconds)))} s; file creation ${fixed(fileCreateMs[0]!, 3)} ms`);

    const commandBaseline: BaselineOptions = { scratch, rssMethod, concurrency: kCommandConcurrency };
    const moduleBaseline: BaselineOptions = { scratch, rssMethod, concurrency: kModuleConcurrency };
    // csv-wave's default --threads for module tasks (src/options/options.ts): the raw loop gets as many.
    const rawThreads = Math.min(kModuleConcurrency, availableParallelism());

    // Warm-up (page cache, parallel's perl, node's code cache): small runs, not counted.
    for (const command of kCommands) {
      await runCsvWave(scratch, rssMethod, 200, 1, ['--cmd', command.command], kCommandConcurrency);
      await runParallel(200, command, commandBaseline);
      await runXargs(200, command, commandBaseline);
    }
    await runCsvWave(scratch, rssMethod, 200, 1, moduleArgs, kModuleConcurrency);
    await runRawLoop(modulePath, 200, kWaves, rawThreads, moduleBaseline);

    // 1. Commands: csv-wave, parallel, xargs, csv-wave, …
    const command: Results['command'] = { true: { ours: [], parallel: [], xargs: [] }, print1k: { ours: [], parallel: [], xargs: [] } };
    for (let i = 0; i < options.runs; i++) {
      for (const spec of kCommands) {
        const check = spec.outputBytes > 0 ? checkOutputs(spec) : undefined;
        const ours = await runCsvWave(scratch, rssMethod, sizes.command, 1, ['--cmd', spec.command], kCommandConcurrency, check);
        const parallel = await runParallel(sizes.command, spec, commandBaseline);
        const xargs = await runXargs(sizes.command, spec, commandBaseline);
        command[spec.key].ours.push(ours);
        command[spec.key].parallel.push(parallel);
        command[spec.key].xargs.push(xargs);
        log(
          `command ${spec.key} run ${i + 1}: csv-wave ${fixed(ours.measure.seconds)} s, parallel ${fixed(parallel.seconds)} s, xargs ${fixed(xargs.seconds)} s; ` +
            `csv-wave/parallel ${fixed(ours.measure.seconds / parallel.seconds)}, csv-wave/xargs ${fixed(ours.measure.seconds / xargs.seconds)}`,
        );
      }
    }

    // 2. No-op modules: the waves run, the raw loop, 20k at 64, 2k at 64, 20k at 2, interleaved.
    const waves: Run[] = [];
    const raw: RawLoopRun[] = [];
    const module: Results['module'] = { big: [], small: [], low: [] };
    for (let i = 0; i < options.runs; i++) {
      const layered = await runCsvWave(scratch, rssMethod, sizes.waves, kWaves, moduleArgs, kModuleConcurrency);
      waves.push(layered);
      const rawRun = await runRawLoop(modulePath, sizes.waves, kWaves, rawThreads, moduleBaseline);
      raw.push(rawRun);
      const big = await runCsvWave(scratch, rssMethod, sizes.module, 1, moduleArgs, kModuleConcurrency);
      module.big.push(big);
      const small = await runCsvWave(scratch, rssMethod, sizes.moduleSmall, 1, moduleArgs, kModuleConcurrency);
      module.small.push(small);
      const low = await runCsvWave(scratch, rssMethod, sizes.module, 1, moduleArgs, kModuleLowConcurrency);
      module.low.push(low);
      fileCreateMs.push(fileCreationMs(scratch));
      log(
        `module run ${i + 1}: ${thousands(sizes.waves)} in ${kWaves} waves ${fixed(layered.measure.seconds)} s ` +
          `(${thousands(sizes.waves / layered.measure.seconds)} tasks/s, peak ${megabytes(layered.measure.maxRssKb)} MB, ` +
          `${layered.rewrites} tasks.csv rewrites seen), raw piscina loop ${fixed(rawRun.measure.seconds)} s ` +
          `(csv-wave/raw ${fixed(layered.measure.seconds / rawRun.measure.seconds)}), ${thousands(sizes.module)}@${kModuleConcurrency} ${fixed(big.measure.seconds)} s, ` +
          `${thousands(sizes.moduleSmall)}@${kModuleConcurrency} ${fixed(small.measure.seconds)} s, ` +
          `${thousands(sizes.module)}@${kModuleLowConcurrency} ${fixed(low.measure.seconds)} s`,
      );
    }

    const profiles: ProfiledRun[] = [];
    if (options.profile) {
      const profiled = async (label: string, tasks: number, layers: number, args: string[], concurrency: number) => {
        const dir = writeSession(join(scratch, `profiled-${++sessionCounter}`), tasksCsv(tasks, layers));
        const run = await profileCli(label, tasks, ['run', dir, ...args, '--concurrency', String(concurrency), '--json'], { cwd: scratch, scratch });
        await checkRun(run.measure, dir, tasks, label);
        rmSync(dir, { recursive: true, force: true });
        profiles.push(run);
        log(`profiled: ${label}, ${fixed(run.measure.seconds)} s`);
      };
      await profiled(`${thousands(sizes.waves)} no-op module tasks in ${kWaves} waves, concurrency ${kModuleConcurrency}`, sizes.waves, kWaves, moduleArgs, kModuleConcurrency);
      for (const spec of kCommands) {
        await profiled(`${thousands(sizes.command)} ${spec.label} commands, concurrency ${kCommandConcurrency}`, sizes.command, 1, ['--cmd', spec.command], kCommandConcurrency);
      }
    }

    const { section, goals } = renderSection(options, { rssMethod, startup, fileCreateMs, command, waves, raw, rawThreads, module, profiles }, loadAtStart);
    publish('run', section, options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/run.ts ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:run', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
