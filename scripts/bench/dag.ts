/**
 * A DAG of commands against the build tools (`npm run bench:dag`, issue 27 goal 1): the
 * same layered DAG of trivial commands run by csv-wave (journal and tasks.csv included),
 * by `ninja -j4` and by `make -j4`, from build files this script writes; and `true` ×
 * 5,000 independent tasks by csv-wave and by `xargs -P4`. Goals: csv-wave at most 1.0 ×
 * ninja's wall time on the DAG, and at most 1.5 × xargs's on `true` × 5,000. Section
 * `<!-- bench:dag -->` of BENCHMARKS.md.
 *
 *   npx tsx scripts/bench/dag.ts [--tasks 3000] [--layers 30] [--flat 5000] [common options]
 *
 * The DAG is gen-dag's layered one: each task past the first layer depends on 1 or 2 tasks
 * of the layer before (1.5 on average). Every task runs `true` through `/bin/sh -c`, as
 * csv-wave runs a task's command: ninja does too; make runs a command without shell
 * characters itself, without a shell, so make's figure is a little kind to make.
 * ninja gets one `build` edge per task whose output (never created) is the task's id and
 * whose inputs are its deps' ids; make gets one phony target per task with its deps as
 * prerequisites. A round runs csv-wave, ninja, make, xargs, then the same in reverse
 * order (ABBA), so that the machine's drift cancels. Every run is checked: csv-wave's
 * summary, tasks.csv and journal; ninja's log holds every edge; make and xargs exit 0.
 *
 * --quick: a tenth of the sizes, 2 rounds, BENCHMARKS.md not written unless --write.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateDag, generateLayeredDag } from '../gen-dag.js';
import { runXargs } from './baselines.js';
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
  positiveInteger,
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
import { depsOf } from './workload.js';

const kConcurrency = 4;
const kSeed = 27;
const kCommand = 'true';
const kGoalNinja = 1.0;
const kGoalXargs = 1.5;

interface Options extends CommonOptions {
  tasks: number;
  layers: number;
  flat: number;
}

type Tool = 'csv-wave' | 'ninja' | 'make' | 'csv-wave flat' | 'xargs';
const kOrder: readonly Tool[] = ['csv-wave', 'ninja', 'make', 'csv-wave flat', 'xargs'];

interface Build {
  ids: string[];
  deps: number[][];
}

let counter = 0;

/** ninja's build file: one rule, one edge per task (output: its id; inputs: its deps' ids). */
export function ninjaFile({ ids, deps }: Build, command: string): string {
  const lines = ['rule task', `  command = ${command}`, ''];
  ids.forEach((id, task) => lines.push(`build ${id}: task${deps[task]!.map((dep) => ` ${ids[dep]}`).join('')}`));
  lines.push('', `default ${ids.join(' ')}`, '');
  return lines.join('\n');
}

/** make's file: `all` first, then one phony target per task with its deps as prerequisites. */
export function makeFile({ ids, deps }: Build, command: string): string {
  const lines = [`all: ${ids.join(' ')}`, `.PHONY: all ${ids.join(' ')}`, ''];
  ids.forEach((id, task) => lines.push(`${id}:${deps[task]!.map((dep) => ` ${ids[dep]}`).join('')}`, `\t@${command}`));
  lines.push('');
  return lines.join('\n');
}

async function runCsvWave(root: string, rssMethod: RssMethod, csv: string, tasks: number, what: string): Promise<Measure> {
  const dir = writeSession(join(root, `session-${++counter}`), csv);
  const measure = await timed(
    { node: ['run', dir, '--cmd', kCommand, '--concurrency', String(kConcurrency), '--json'] },
    { cwd: root, scratch: root, rssMethod },
  );
  await checkRun(measure, dir, tasks, what);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

/** ninja in a fresh folder; checked: exit 0 and one line per edge in its log. */
async function runNinja(root: string, rssMethod: RssMethod, build: Build): Promise<Measure> {
  const dir = join(root, `ninja-${++counter}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'build.ninja'), ninjaFile(build, kCommand));
  const measure = await timed(['ninja', '-j', String(kConcurrency)], { cwd: dir, scratch: root, rssMethod, stdoutFile: join(dir, 'output.txt') });
  if (measure.status !== 0) fail(`ninja exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  const logged = readFileSync(join(dir, '.ninja_log'), 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
  if (logged !== build.ids.length) fail(`ninja's log has ${logged} edge(s), expected ${build.ids.length}`);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

/** make in a fresh folder; checked: exit 0 (every target is phony, so each one ran). */
async function runMake(root: string, rssMethod: RssMethod, build: Build): Promise<Measure> {
  const dir = join(root, `make-${++counter}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'Makefile'), makeFile(build, kCommand));
  const measure = await timed(['make', '-s', '-j', String(kConcurrency)], { cwd: dir, scratch: root, rssMethod, stdoutFile: join(dir, 'output.txt') });
  if (measure.status !== 0) fail(`make exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: { ...kCommonOptions, tasks: { type: 'string' }, layers: { type: 'string' }, flat: { type: 'string' } },
    strict: true,
  });
  const common = commonOptions(values);
  const scale = common.quick ? 10 : 1;
  const count = (name: string, text: string | undefined, fallback: number) => (text === undefined ? fallback : positiveInteger(name, text));
  const tasks = count('tasks', values.tasks, 3_000 / scale);
  const layers = count('layers', values.layers, 30 / (common.quick ? 3 : 1));
  if (layers > tasks) fail(`--layers (${layers}) must be at most --tasks (${tasks})`);
  return { ...common, tasks, layers, flat: count('flat', values.flat, 5_000 / scale) };
}

async function benchmark(options: Options): Promise<void> {
  for (const [tool, debian] of [['ninja', 'ninja-build'], ['make', 'make'], ['xargs', 'findutils']] as const) {
    if (versionOf(tool) === undefined) fail(`${tool} is not installed; this benchmark compares against it (Debian: sudo apt-get install -y ${debian})`);
  }
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-dag-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const dagCsv = generateLayeredDag({ tasks: options.tasks, layers: options.layers, minDeps: 1, maxDeps: 2, seed: kSeed });
    const deps = depsOf(dagCsv);
    const build: Build = { ids: deps.map((_, index) => `T${String(index + 1).padStart(6, '0')}`), deps };
    const meanDeps = deps.reduce((sum, list) => sum + list.length, 0) / Math.max(1, deps.filter((list) => list.length > 0).length);
    const flatCsv = generateDag({ tasks: options.flat, meanDeps: 0, seed: kSeed });
    const xargsBaseline = { scratch, rssMethod, concurrency: kConcurrency };
    const command = { command: kCommand, outputBytes: 0 };
    const runOne = (tool: Tool): Promise<Measure> => {
      switch (tool) {
        case 'csv-wave':
          return runCsvWave(scratch, rssMethod, dagCsv, options.tasks, `csv-wave on the DAG of ${options.tasks} tasks`);
        case 'ninja':
          return runNinja(scratch, rssMethod, build);
        case 'make':
          return runMake(scratch, rssMethod, build);
        case 'csv-wave flat':
          return runCsvWave(scratch, rssMethod, flatCsv, options.flat, `csv-wave on ${options.flat} independent tasks`);
        case 'xargs':
          return runXargs(options.flat, command, xargsBaseline);
      }
    };
    console.log(`scratch ${scratch}; ${options.runs} round(s) of ABBA; load average ${loadAtStart}`);
    // Warm-up (page cache, node's code cache), not counted.
    for (const tool of kOrder) await runOne(tool);

    const figures = new Map<Tool, Measure[]>(kOrder.map((tool) => [tool, []]));
    const loads: string[] = [];
    for (let round = 0; round < options.runs; round++) {
      const order = round % 2 === 0 ? kOrder : [...kOrder].reverse();
      const seconds: string[] = [];
      for (const tool of order) {
        const measure = await runOne(tool);
        figures.get(tool)!.push(measure);
        seconds.push(`${tool} ${fixed(measure.seconds)} s`);
      }
      loads.push(loadAverage());
      console.log(`round ${round + 1} (load ${loads.at(-1)}): ${seconds.join(', ')}`);
    }

    let profile: ProfiledRun | undefined;
    if (options.profile) {
      const dir = writeSession(join(scratch, `profiled-${++counter}`), dagCsv);
      const label = `${thousands(options.tasks)} \`true\` commands in a layered DAG, concurrency ${kConcurrency}`;
      profile = await profileCli(label, options.tasks, ['run', dir, '--cmd', kCommand, '--concurrency', String(kConcurrency), '--json'], { cwd: scratch, scratch });
      await checkRun(profile.measure, dir, options.tasks, label);
    }

    const secondsOf = (tool: Tool) => figures.get(tool)!.map((measure) => measure.seconds);
    const ratio = (ours: Tool, theirs: Tool) => {
      const a = secondsOf(ours);
      const b = secondsOf(theirs);
      return { ofMedians: median(a) / median(b), pair: median(a.map((value, i) => value / b[i]!)) };
    };
    const ratioText = (r: ReturnType<typeof ratio>) => `${fixed(r.ofMedians)} (per-round median ${fixed(r.pair)})`;
    const ninja = ratio('csv-wave', 'ninja');
    const make = ratio('csv-wave', 'make');
    const xargs = ratio('csv-wave flat', 'xargs');
    const loadAtEnd = loadAverage();
    const loaded = Math.max(Number(loadAtStart), ...loads.map(Number), Number(loadAtEnd)) > 2;
    const loadNote = loaded ? ' (taken at a load average above 2: does not count as met)' : '';

    const lines: string[] = ['## A DAG of commands: csv-wave against ninja, make and xargs', ''];
    lines.push(
      `A layered DAG of ${thousands(options.tasks)} tasks (\`generateLayeredDag\` in scripts/gen-dag.ts: ${options.layers} layers, each task past the first ` +
        `depending on 1 or 2 tasks of the layer before, ${fixed(meanDeps)} on average; seed ${kSeed}), each running \`${kCommand}\`, at -j${kConcurrency}: ` +
        'csv-wave (`run --cmd true`, a child process of the built CLI: node start-up, validation, the journal and tasks.csv included), ' +
        '`ninja` on a build.ninja of one edge per task, and `make` on a Makefile of one phony target per task, both written by the script. ' +
        `Beside it, ${thousands(options.flat)} independent \`${kCommand}\` tasks: csv-wave against \`xargs -P${kConcurrency} -n 1 /bin/sh -c true sh\`. ` +
        'csv-wave and ninja run each command through `/bin/sh -c`; make runs a command without shell characters itself. ' +
        `${options.runs} round(s), the order reversed every other round (ABBA); figures are medians (min–max), ratios are of the medians, with the median of the per-round ratios beside.`,
      '',
    );
    lines.push(
      ...machineLines('scripts/bench/dag.ts', 'bench:dag', loadAtStart, [
        `- Load average after each round: ${loads.join(', ')}`,
        `- ninja ${versionOf('ninja')}; ${versionOf('make')}`,
        `- Peak memory: ${rssMethodText(rssMethod)}`,
      ]),
      '',
    );
    lines.push('| run | tasks | wall s, median (min–max) | tasks/s | CPU s | peak MB |', '|---|---:|---:|---:|---:|---:|');
    const label: Record<Tool, string> = {
      'csv-wave': `csv-wave \`run --cmd true --concurrency ${kConcurrency}\`, the DAG`,
      ninja: `\`ninja -j ${kConcurrency}\`, the DAG`,
      make: `\`make -s -j ${kConcurrency}\`, the DAG`,
      'csv-wave flat': `csv-wave \`run --cmd true --concurrency ${kConcurrency}\`, independent tasks`,
      xargs: `\`xargs -P ${kConcurrency} -n 1 -a IDS /bin/sh -c true sh\`, independent tasks`,
    };
    for (const tool of kOrder) {
      const measures = figures.get(tool)!;
      const tasks = tool === 'csv-wave flat' || tool === 'xargs' ? options.flat : options.tasks;
      lines.push(
        `| ${label[tool]} | ${thousands(tasks)} | ${spread(secondsOf(tool))} | ${thousands(tasks / median(secondsOf(tool)))} | ` +
          `${fixed(median(measures.map((m) => m.cpuSeconds)))} | ${megabytes(Math.max(...measures.map((m) => m.maxRssKb)))} |`,
      );
    }
    lines.push('');
    const goals: [string, string, boolean][] = [
      [`${thousands(options.tasks)} \`true\` in a layered DAG at -j${kConcurrency}: csv-wave/ninja wall time at most ${kGoalNinja}${loadNote}`, ratioText(ninja), !loaded && ninja.ofMedians <= kGoalNinja],
      [`${thousands(options.flat)} \`true\` at -j${kConcurrency}: csv-wave/\`xargs -P${kConcurrency}\` wall time at most ${kGoalXargs}${loadNote}`, ratioText(xargs), !loaded && xargs.ofMedians <= kGoalXargs],
    ];
    lines.push(...goalTable(goals), '');
    lines.push(`csv-wave/make on the DAG: ${ratioText(make)}.`, '');
    if (profile) {
      lines.push('### Where the time goes', '', kProfileMethod, '', ...topCostLines(profile), '', ...threadTables(profile));
    }
    publish('dag', lines.join('\n'), options);
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
    console.log(`csv-wave/make: ${ratioText(make)}`);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

/** The first line a tool prints for its version, or undefined when it is not installed. */
function versionOf(file: string): string | undefined {
  const result = spawnSync(file, ['--version'], { encoding: 'utf8' });
  return result.status === 0 && !result.error ? result.stdout.split('\n')[0]!.trim() : undefined;
}

export const kUsage = `npx tsx scripts/bench/dag.ts [--tasks 3000] [--layers 30] [--flat 5000] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:dag', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
