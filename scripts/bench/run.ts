/**
 * Run-engine benchmark (`npm run bench:run`): times `csv-wave run` end to end, as a child
 * process of the built CLI (dist/cli/bin.js), and records the figures in BENCHMARKS.md
 * between the markers `<!-- bench:run -->` and `<!-- /bench:run -->`. The goals:
 *
 *   1. Process tasks vs GNU parallel: 5,000 rows running `true`, and 5,000 rows running a
 *      command that prints 1 KB (`printf '%01023d\n' 0`), at concurrency 4, take at most
 *      0.6 times as long as GNU parallel on the same rows (`parallel -j4 --joblog FILE -a
 *      IDS …`, its output to a file), with csv-wave's tasks.csv and journal complete. The
 *      runs are interleaved (ours, theirs, ours, theirs, …) so that drift cancels.
 *   2. In-process tasks: 100,000 no-op module tasks in 10 waves (each task depends on one
 *      of the wave before) at concurrency 64 run at 20,000 tasks/s or more, end to end
 *      (node start-up, validation, journal and tasks.csv included), with
 *      the run engine's durability as it is: a watcher counts the tasks.csv rewrites and
 *      the journal's size during the run. That run also peaks under 1 GB of memory.
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
 * one line per row, all with exit value 0, and its output file the expected size).
 * Unless --no-profile, one run of each case is profiled with `node --cpu-prof` (main and
 * worker threads), for the top three remaining costs.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateDag, generateLayeredDag, taskId } from '../gen-dag.js';
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
  kProfileMethod,
  loadAverage,
  machineLines,
  median,
  megabytes,
  parallelVersion,
  percent,
  printGoal,
  profileCli,
  publish,
  rssMethodText,
  runMain,
  spread,
  thousands,
  threadTables,
  timed,
  topCostLines,
  watchSession,
  writeSession,
  type CommonOptions,
  type Measure,
  type ProfiledRun,
  type RssMethod,
  type RunSummaryJson,
  type ThreadSummary,
} from './lib.js';

const kSeed = 7;
const kCommandConcurrency = 4;
const kGoalCommandRatio = 0.6;
const kModuleConcurrency = 64;
const kModuleLowConcurrency = 2;
const kWaves = 10;
const kGoalTasksPerSecond = 20_000;
const kGoalPerTaskRatio = 1.3;
const kGoalMemoryBytes = 1e9;
const kNoopModule = "export default async () => ({findings: ''});\n";

/** The two command cases: the same shell command for csv-wave and GNU parallel. */
const kCommands = [
  { key: 'true', label: '`true`', command: 'true', outputBytes: 0 },
  { key: 'print1k', label: "`printf '%01023d\\n' 0` (prints 1 KB)", command: "printf '%01023d\\n' 0", outputBytes: 1024 },
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
  command: Record<CommandKey, { ours: Run[]; theirs: Measure[] }>;
  waves: Run[];
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

async function runCsvWave(root: string, rssMethod: RssMethod, tasks: number, waves: number, executorArgs: string[], concurrency: number, check?: (dir: string) => void): Promise<Run> {
  const dir = writeSession(join(root, `session-${tasks}-${++sessionCounter}`), tasksCsv(tasks, waves));
  const watch = watchSession(dir);
  const measure = await timed(
    { node: ['run', dir, ...executorArgs, '--concurrency', String(concurrency), '--json'] },
    { cwd: root, scratch: root, rssMethod, poll: { intervalMs: 100, tick: watch.tick } },
  );
  watch.tick();
  const what = `csv-wave run (${tasks} tasks, ${waves} wave(s), ${executorArgs.join(' ')}, concurrency ${concurrency})`;
  const { summary } = await checkRun(measure, dir, tasks, what);
  check?.(dir);
  rmSync(dir, { recursive: true, force: true });
  return { measure, summary, rewrites: watch.rewrites, journalPeakBytes: watch.journalPeakBytes };
}

/** GNU parallel on the same rows: `true` gets the id as an argument (ignored); printf gets none (-N0). */
async function runParallel(root: string, rssMethod: RssMethod, tasks: number, command: (typeof kCommands)[number]): Promise<Measure> {
  const dir = join(root, `parallel-${tasks}-${++sessionCounter}`);
  mkdirSync(dir);
  const ids = join(dir, 'ids.txt');
  writeFileSync(ids, Array.from({ length: tasks }, (_, index) => `${taskId(index)}\n`).join(''));
  const joblog = join(dir, 'joblog.tsv');
  const output = join(dir, 'output.txt');
  const args = ['parallel', '-j', String(kCommandConcurrency), ...(command.outputBytes > 0 ? ['-N0'] : []), '--joblog', joblog, '-a', ids, command.command];
  const measure = await timed(args, { cwd: dir, scratch: root, rssMethod, stdoutFile: output });
  if (measure.status !== 0) fail(`parallel exited with ${measure.status}:\n${measure.stderr.slice(-3000)}`);
  const lines = readFileSync(joblog, 'utf8').trim().split('\n').slice(1);
  const ok = lines.filter((line) => line.split('\t')[6] === '0').length;
  if (lines.length !== tasks || ok !== tasks) fail(`parallel's joblog has ${ok} successful job(s) of ${lines.length}, expected ${tasks}`);
  const bytes = statSync(output).size;
  if (bytes !== tasks * command.outputBytes) fail(`parallel printed ${bytes} bytes, expected ${tasks * command.outputBytes}`);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

/** csv-wave keeps a 1 KB output as findings cut to the cell plus the whole of it in artifacts/<id>/output.md. */
function checkOutputs(tasks: number): (dir: string) => void {
  return (dir) => {
    const folder = join(dir, 'artifacts');
    const count = existsSync(folder)
      ? readdirSync(folder).filter((id) => existsSync(join(folder, id, 'output.md'))).length
      : 0;
    if (count !== tasks) fail(`the 1 KB run kept ${count} output artifact(s), expected ${tasks}`);
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
  for (const profile of profiles) {
    const workers = profile.threads.filter((thread) => thread.thread !== 'main');
    const main = profile.threads.find((thread) => thread.thread === 'main');
    const workerBusy = workers.reduce((sum, thread) => sum + thread.busyMs, 0);
    const share = (ms: number) => (workerBusy > 0 ? ms / workerBusy : 0);
    const spawnMs = sumMs(workers, (row) => /^(ChildProcess\.spawn|spawn) \(/.test(row.name));
    if (share(spawnMs) >= 0.15) {
      notes.push(
        `- ${profile.label}: \`spawn\` takes ${percent(spawnMs, workerBusy)} of the worker threads' busy time ` +
          `(${fixed(spawnMs / profile.tasks, 2)} ms per task; the profiler's signals make fork() slower still): libuv forks the whole ` +
          "process (its heaps, the other isolates, every thread's mappings) and blocks the calling thread until the child has " +
          "exec'd, and `CommandExecutor.run` (src/executors/command.ts) always execs `/bin/sh -c` first, even for a template with no shell syntax.",
      );
    }
    const executorMs = sumMs(workers, (row) => row.name.startsWith('(anonymous) (src/executors/command.ts:'));
    if (share(executorMs) >= 0.02) {
      notes.push(
        `- ${profile.label}: the promise executor of \`CommandExecutor.run\` (src/executors/command.ts) has ${percent(executorMs, workerBusy)} ` +
          'self time, most likely the `{...process.env, …}` copy per task (process.env is backed by C++ interceptors: spreading ' +
          'it reads every variable each time).',
      );
    }
    if (main && main.wallMs > 0 && main.busyMs > 0) {
      const rewrite = main.selfByFunction.filter((row) => row.name.includes('csv-stringify/')).reduce((sum, row) => sum + row.ms, 0);
      const post = main.selfByFunction.filter((row) => /^(postTask|postMessage) /.test(row.name)).reduce((sum, row) => sum + row.ms, 0);
      const pieces: string[] = [];
      if (rewrite / main.busyMs >= 0.1) {
        pieces.push(`csv-stringify (the periodic rewrites of tasks.csv: \`checkpoint\` in src/engine/run-session.ts) ${percent(rewrite, main.busyMs)}`);
      }
      if (post / main.busyMs >= 0.1) pieces.push(`handing tasks to piscina (\`postTask\`, \`postMessage\`) ${percent(post, main.busyMs)}`);
      // The workers write nothing: each task's discovery file and long output are created here.
      const fileWrites = sumMs([main], (row) => /^(writeFileUtf8|open|mkdir|close) \(native\)$/.test(row.name));
      if (fileWrites / main.busyMs >= 0.1) {
        pieces.push(
          `synchronous file creation (\`writeFileUtf8\`, \`mkdir\`: \`writeAttemptFiles\` in src/knowledge/attempt-files.ts writes a new ` +
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
      `- Peak memory: maximum resident set size of the CLI process (worker threads included), ${rssMethodText(results.rssMethod)}`,
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
  for (const command of kCommands) {
    const { ours, theirs } = results.command[command.key];
    lines.push(row(`csv-wave \`--cmd\` ${command.label}`, sizes.command, 1, kCommandConcurrency, ours));
    lines.push(
      `| GNU parallel \`-j${kCommandConcurrency}${command.outputBytes > 0 ? ' -N0' : ''} --joblog F -a IDS\` ${command.label}, output to a file | ${thousands(sizes.command)} | – | ${kCommandConcurrency} | ` +
        `${spread(theirs.map((m) => m.seconds))} | ${thousands(sizes.command / median(theirs.map((m) => m.seconds)))} | – | ` +
        `${fixed(median(theirs.map((m) => m.cpuSeconds)))} | ${peakMb(theirs)} | – | – |`,
    );
  }
  lines.push(row('csv-wave `--module noop.mjs`', sizes.waves, kWaves, kModuleConcurrency, results.waves));
  lines.push(row('csv-wave `--module noop.mjs`', sizes.module, 1, kModuleConcurrency, results.module.big));
  lines.push(row('csv-wave `--module noop.mjs`', sizes.moduleSmall, 1, kModuleConcurrency, results.module.small));
  lines.push(row('csv-wave `--module noop.mjs`', sizes.module, 1, kModuleLowConcurrency, results.module.low));
  lines.push('');

  const ratio = (key: CommandKey) => {
    const { ours, theirs } = results.command[key];
    return {
      ours: median(secondsOf(ours)),
      theirs: median(theirs.map((m) => m.seconds)),
      pair: median(ours.map((run, i) => run.measure.seconds / theirs[i]!.seconds)),
    };
  };
  const perTask = (runs: Run[], tasks: number) => (1000 * median(secondsOf(runs))) / tasks;
  const perTaskRatio = perTask(results.module.big, sizes.module) / perTask(results.module.small, sizes.moduleSmall);
  const perTaskEngineRatio = median(enginesOf(results.module.big)) / sizes.module / (median(enginesOf(results.module.small)) / sizes.moduleSmall);
  const wavesPerSecond = sizes.waves / median(secondsOf(results.waves));
  const wavesEnginePerSecond = sizes.waves / median(enginesOf(results.waves));
  const wavesPeakKb = Math.max(...results.waves.map((r) => r.measure.maxRssKb));
  lines.push(
    `The worker pool has the default \`--threads\`: 1 thread for the commands, min(concurrency, cores) = ` +
      `${Math.min(kModuleConcurrency, cores)} for the modules at concurrency ${kModuleConcurrency}. ` +
      kCommands
        .map((command) => {
          const r = ratio(command.key);
          return `csv-wave/parallel for ${command.label}: ${fixed(r.ours / r.theirs)} (median of the per-pair ratios ${fixed(r.pair)})`;
        })
        .join('; ') +
      `. ${thousands(sizes.waves)} tasks in ${kWaves} waves: ${thousands(wavesPerSecond)} tasks/s end to end, ${thousands(wavesEnginePerSecond)} tasks/s ` +
      `from the engine's own durationMs (without node start-up); tasks.csv was seen rewritten ${median(results.waves.map((r) => r.rewrites))} times during the run ` +
      `and the journal held up to ${thousands(median(results.waves.map((r) => r.journalPeakBytes)) / 1024)} KB (median). ` +
      `Time per task at ${thousands(sizes.module)} vs ${thousands(sizes.moduleSmall)} rows: ${fixed(perTaskRatio)} end to end, ${fixed(perTaskEngineRatio)} ` +
      'from durationMs (both sizes carry the same fixed start-up cost, which flatters the larger one).',
    '',
  );

  const goals: [string, string, boolean][] = [];
  for (const command of kCommands) {
    const r = ratio(command.key);
    goals.push([
      `${thousands(sizes.command)} ${command.label} commands at concurrency ${kCommandConcurrency}: csv-wave/GNU parallel wall time at most ${kGoalCommandRatio}`,
      `${fixed(r.ours / r.theirs)} (${fixed(r.ours)} s / ${fixed(r.theirs)} s)`,
      r.ours / r.theirs <= kGoalCommandRatio,
    ]);
  }
  goals.push([
    `${thousands(sizes.waves)} no-op module tasks in ${kWaves} waves: at least ${thousands(kGoalTasksPerSecond)} tasks/s end to end, journal and periodic tasks.csv as they are`,
    `${thousands(wavesPerSecond)} tasks/s (${fixed(wavesPerSecond / kGoalTasksPerSecond)} of the goal)`,
    wavesPerSecond >= kGoalTasksPerSecond,
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

    // Warm-up (page cache, parallel's perl, node's code cache): small runs, not counted.
    for (const command of kCommands) {
      await runCsvWave(scratch, rssMethod, 200, 1, ['--cmd', command.command], kCommandConcurrency);
      await runParallel(scratch, rssMethod, 200, command);
    }
    await runCsvWave(scratch, rssMethod, 200, 1, moduleArgs, kModuleConcurrency);

    // 1. Commands: ours, theirs, ours, theirs, …
    const command = { true: { ours: [], theirs: [] }, print1k: { ours: [], theirs: [] } } as Results['command'];
    for (let i = 0; i < options.runs; i++) {
      for (const spec of kCommands) {
        const check = spec.outputBytes > 0 ? checkOutputs(sizes.command) : undefined;
        const ours = await runCsvWave(scratch, rssMethod, sizes.command, 1, ['--cmd', spec.command], kCommandConcurrency, check);
        const theirs = await runParallel(scratch, rssMethod, sizes.command, spec);
        command[spec.key].ours.push(ours);
        command[spec.key].theirs.push(theirs);
        log(
          `command ${spec.key} run ${i + 1}: csv-wave ${fixed(ours.measure.seconds)} s, parallel ${fixed(theirs.seconds)} s, ` +
            `ratio ${fixed(ours.measure.seconds / theirs.seconds)}`,
        );
      }
    }

    // 2. No-op modules: the waves run, 20k at 64, 2k at 64, 20k at 2, interleaved.
    const waves: Run[] = [];
    const module: Results['module'] = { big: [], small: [], low: [] };
    for (let i = 0; i < options.runs; i++) {
      const layered = await runCsvWave(scratch, rssMethod, sizes.waves, kWaves, moduleArgs, kModuleConcurrency);
      waves.push(layered);
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
          `${layered.rewrites} tasks.csv rewrites seen), ${thousands(sizes.module)}@${kModuleConcurrency} ${fixed(big.measure.seconds)} s, ` +
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

    const { section, goals } = renderSection(options, { rssMethod, startup, fileCreateMs, command, waves, module, profiles }, loadAtStart);
    publish('run', section, options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/run.ts ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:run', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
