/**
 * Plan benchmark (`npm run bench:plan`): times `csv-wave validate` and `csv-wave plan` on
 * random DAGs of 10,000 and 100,000 tasks (scripts/gen-dag.ts, mean deps 3, fixed seed),
 * as child processes of the built CLI (dist/cli/bin.js), and records the median wall time,
 * the peak RSS, the 100k/10k ratio and a CPU profile of one 100k plan in BENCHMARKS.md,
 * between the markers `<!-- bench:plan -->` and `<!-- /bench:plan -->`. Goals at 100,000
 * tasks: validate and plan each under 3 s, and under 300 MB peak (issue 12; it was 400 MB);
 * the 100k/10k time ratio at most 12.
 *
 *   npx tsx scripts/bench/plan.ts [--sizes 10000,100000] [--mean-deps 3] [--seed 42]
 *                                 [--quick] [--runs N] [--dir PATH] [--no-profile]
 *                                 [--write | --no-write] [--no-build] [--keep]
 *
 * --quick: sizes 1,000 and 10,000, 2 runs, BENCHMARKS.md not written unless --write.
 * Every plan run starts from the freshly generated file (empty wave column), so that plan
 * really fills the column and rewrites tasks.csv. Each plan run is checked: exit code 0,
 * every wave cell right (1 + the largest wave of the row's deps), and every other cell as
 * it was (compared as CSV records: how the writer quotes is its own business).
 */
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse';
import { generateDag } from '../gen-dag.js';
import {
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
  percent,
  printGoal,
  publish,
  rssMethodText,
  runMain,
  thousands,
  timed,
  writeSession,
  type CommonOptions,
  type Measure,
  type RssMethod,
} from './lib.js';
import { profileCli, profileTable, topCostLines, type ProfiledRun, type ProfileRow, type ThreadSummary } from './profile.js';

const kGoalSeconds = 3;
/** Peak RSS of validate and of plan at 100,000 tasks, in MiB (issue 12). */
const kGoalMegabytes = 300;
const kGoalRatio = 12;

interface Options extends CommonOptions {
  sizes: number[];
  meanDeps: number;
  seed: number;
}

interface SizeResult {
  tasks: number;
  bytes: number;
  waves: number;
  validate: Measure[];
  plan: Measure[];
}

const seconds = (value: number) => fixed(value);
const secondsOf = (measures: readonly Measure[]) => measures.map((m) => m.seconds);

function checkValidate(measure: Measure, tasks: number): number {
  const match = /^OK: (\d+) tasks, (\d+) waves$/m.exec(measure.stdout);
  if (measure.status !== 0 || !match || Number(match[1]) !== tasks) {
    fail(`validate failed (exit ${measure.status}):\n${measure.stdout}${measure.stderr.slice(0, 2000)}`);
  }
  return Number(match[2]);
}

/**
 * plan must exit 0, write every row back with the same cells, and fill each wave cell with
 * 1 + the largest wave of the row's deps (1 without deps). Compared as CSV records, not
 * bytes, so that the check does not depend on how the writer quotes; read as streams, in
 * step, so that a million rows fit.
 */
export async function checkPlan(measure: Measure, tasksPath: string, generated: string): Promise<void> {
  if (measure.status !== 0) fail(`plan failed (exit ${measure.status ?? measure.signal}):\n${measure.stderr.slice(-2000)}`);
  const options = { columns: true, bom: true, skip_empty_lines: true } as const;
  const expected = (Readable.from([generated]).pipe(parse(options)) as AsyncIterable<Record<string, string>>)[Symbol.asyncIterator]();
  const waves = new Map<string, number>();
  let rows = 0;
  for await (const row of createReadStream(tasksPath).pipe(parse(options)) as AsyncIterable<Record<string, string>>) {
    rows++;
    const { value: before, done } = await expected.next();
    if (done) fail(`plan wrote more rows than the ${rows - 1} it was given`);
    const names = Object.keys(before);
    if (Object.keys(row).length !== names.length) fail(`plan changed the columns of row ${rows}`);
    for (const name of names) {
      if (name !== 'wave' && row[name] !== before[name]) fail(`plan changed the ${name} of row ${rows} (${before['id']})`);
    }
    const deps = (row['deps'] ?? '').split(';').filter((id) => id !== '');
    const wave = 1 + Math.max(0, ...deps.map((id) => waves.get(id) ?? fail(`row ${rows}: dep ${id} comes later or is unknown`)));
    if (row['wave'] !== String(wave)) fail(`plan gave row ${rows} (${row['id']}) wave "${row['wave']}", expected ${wave}`);
    waves.set(row['id']!, wave);
  }
  if (!(await expected.next()).done) fail(`plan wrote ${rows} rows, fewer than it was given`);
}

/** One paragraph naming what dominates, written from the profile's figures. */
function dominates(summary: ThreadSummary, startupSeconds: number, planSeconds: number, tasks: number): string {
  const total = summary.busyMs;
  const parts: string[] = [
    `Node start-up and loading the CLI cost ${seconds(startupSeconds)} s of the ${seconds(planSeconds)} s median ${thousands(tasks)}-task plan; the rest grows with the file.`,
  ];
  const own = summary.byOwnFunction.filter((row) => !row.name.startsWith('(') && !row.name.includes('no csv-wave function'));
  if (own.length > 0) {
    const named = own.slice(0, 5).map((row) => `\`${row.name}\` ${percent(row.ms, total)}`);
    parts.push(`Charged to the innermost csv-wave function (its library calls included): ${named.join(', ')}.`);
  }
  const libraries = summary.byLibrary.filter((row) => !row.name.startsWith('('));
  if (libraries.length > 0) {
    const named = libraries.slice(0, 5).map((row) => `${row.name} ${percent(row.ms, total)}`);
    parts.push(`By library (node internals charged to their caller): ${named.join(', ')}.`);
  }
  parts.push(`The garbage collector takes ${percent(summary.gcMs, total)} of the sampled time.`);
  return parts.join(' ');
}

/**
 * Causes found by reading a profile of this benchmark, printed only while the profile
 * still shows them (so the text does not outlive a fix).
 */
function knownCauses(summary: ThreadSummary, rewriteExtraMb: number): string[] {
  // Rows are named `module` or `function (file:line)`: match the name up to the location.
  const share = (rows: ProfileRow[], name: string) =>
    rows.filter((row) => row.name === name || row.name.startsWith(`${name} (`)).reduce((sum, row) => sum + row.ms, 0) / summary.busyMs;
  const notes: string[] = [];
  if (share(summary.byLibrary, '@dagrejs/graphlib') >= 0.1) {
    notes.push(
      '- **@dagrejs/graphlib** (`buildDag` in src/graph/dag.ts, and `computeWaves` in src/graph/waves.ts through ' +
        '`inEdges`/`successors`): `Graph.setEdge` stores every edge under a string id (`v\\x01w\\x01\\x00`) in ' +
        'six plain objects (`_edgeLabels`, `_edgeObjs`, and the per-node `_in`, `_out`, `_preds`, `_sucs`). The ' +
        'per-node objects are fast-mode objects whose property names are unique, so V8 creates a new hidden class ' +
        'for almost every edge insert, and `inEdges`/`successors` rebuild arrays with `Object.keys`/`Object.values` ' +
        'per call. This is linear but costly per edge, in time and in memory, and it is what feeds most of the GC time.',
    );
  }
  if (rewriteExtraMb >= 100 || share(summary.byLibrary, 'csv-stringify') + share(summary.byOwnFunction, 'writeFileAtomic') >= 0.05) {
    notes.push(
      '- **Rewriting tasks.csv** (`serializeTasks`/`stringifyRecords` in src/csv/serialize-tasks.ts, `writeFileAtomic` in ' +
        'src/files/atomic-write.ts): the table is first copied into a `string[][]`, csv-stringify builds each record by ' +
        'concatenating quoted fields (rope strings: many small heap objects per record), and `writeSync` then encodes ' +
        `the text into a buffer (${Math.round(rewriteExtraMb)} MB above \`validate\` at the largest size).`,
    );
  }
  return notes;
}

function renderSection(options: Options, results: SizeResult[], startup: Measure[], rssMethod: RssMethod, profile: ProfiledRun | null, loadAtStart: string): string {
  const lines: string[] = [];
  lines.push('## Plan: validate + plan', '');
  lines.push(
    'Random acyclic tasks.csv files (`scripts/gen-dag.ts`: Poisson-distributed deps, mean ' +
      `${options.meanDeps}, drawn uniformly from earlier tasks; context_from a subset of deps; seed ${options.seed}), ` +
      'checked with `csv-wave validate` and planned with `csv-wave plan` (which validates too, then fills the wave ' +
      'column and rewrites tasks.csv). Each command runs as a child process of the built CLI (`node dist/cli/bin.js`), ' +
      `${options.runs} times, validate and plan interleaved; wall time is measured by the parent and includes node start-up. Every plan run starts ` +
      'from the generated file (empty wave column) and is checked: every wave cell right (1 + the largest wave of its deps), every other cell as it was (compared as CSV records).',
    '',
  );
  const startupMedian = median(secondsOf(startup));
  lines.push(
    ...machineLines('scripts/bench/plan.ts', 'bench:plan', loadAtStart, [
      `- Peak memory: maximum resident set size, ${rssMethodText(rssMethod)}, highest of the runs`,
      `- Fixed cost: \`csv-wave --version\` (node start-up + loading the CLI) takes ${seconds(startupMedian)} s (median)`,
    ]),
  );
  lines.push('');
  lines.push('| tasks | file MB | waves | validate median s (min–max) | plan median s (min–max) | peak MB validate | peak MB plan |');
  lines.push('|---:|---:|---:|---:|---:|---:|---:|');
  for (const result of results) {
    const v = secondsOf(result.validate);
    const p = secondsOf(result.plan);
    lines.push(
      `| ${thousands(result.tasks)} | ${(result.bytes / 2 ** 20).toFixed(1)} | ${result.waves} | ` +
        `${seconds(median(v))} (${seconds(Math.min(...v))}–${seconds(Math.max(...v))}) | ` +
        `${seconds(median(p))} (${seconds(Math.min(...p))}–${seconds(Math.max(...p))}) | ` +
        `${megabytes(Math.max(...result.validate.map((m) => m.maxRssKb)))} | ${megabytes(Math.max(...result.plan.map((m) => m.maxRssKb)))} |`,
    );
  }
  lines.push('');

  const small = results[0];
  const large = results[results.length - 1];
  const goals: [string, string, boolean][] = [];
  if (small && large && large.tasks === 10 * small.tasks) {
    const label = `${thousands(large.tasks)}/${thousands(small.tasks)}`;
    const vRatio = median(secondsOf(large.validate)) / median(secondsOf(small.validate));
    const pRatio = median(secondsOf(large.plan)) / median(secondsOf(small.plan));
    const net = (r: SizeResult, key: 'validate' | 'plan') => median(secondsOf(r[key])) - startupMedian;
    const fastest = (r: SizeResult, key: 'validate' | 'plan') => Math.min(...secondsOf(r[key]));
    lines.push(
      `${label} ratio of the medians (same run): validate ${vRatio.toFixed(1)}, plan ${pRatio.toFixed(1)} ` +
        `(without the fixed start-up cost: validate ${(net(large, 'validate') / net(small, 'validate')).toFixed(1)}, ` +
        `plan ${(net(large, 'plan') / net(small, 'plan')).toFixed(1)}; ratio of the fastest runs, less sensitive to a busy ` +
        `machine: validate ${(fastest(large, 'validate') / fastest(small, 'validate')).toFixed(1)}, ` +
        `plan ${(fastest(large, 'plan') / fastest(small, 'plan')).toFixed(1)}; linear is 10).`,
      '',
    );
    goals.push([`${label} time ratio at most ${kGoalRatio}`, `${vRatio.toFixed(1)} / ${pRatio.toFixed(1)}`, vRatio <= kGoalRatio && pRatio <= kGoalRatio]);
  }
  const hundredK = results.find((r) => r.tasks === 100_000);
  if (hundredK) {
    const vMedian = median(secondsOf(hundredK.validate));
    const pMedian = median(secondsOf(hundredK.plan));
    const peakKb = Math.max(...hundredK.validate.map((m) => m.maxRssKb), ...hundredK.plan.map((m) => m.maxRssKb));
    goals.unshift(
      [`100,000 tasks: validate under ${kGoalSeconds} s`, `${seconds(vMedian)} s`, vMedian < kGoalSeconds],
      [`100,000 tasks: plan under ${kGoalSeconds} s`, `${seconds(pMedian)} s`, pMedian < kGoalSeconds],
      [`100,000 tasks: validate and plan each peak under ${kGoalMegabytes} MB`, `${megabytes(peakKb)} MB`, megabytes(peakKb) < kGoalMegabytes],
    );
  }
  if (goals.length > 0) {
    lines.push(...goalTable(goals), '');
    for (const [goal, measured, met] of goals) printGoal(goal, met, measured);
  }

  const main = profile?.threads.find((thread) => thread.thread === 'main');
  if (profile && main && large) {
    lines.push('### Top three remaining costs', '');
    lines.push(...topCostLines(profile), '');
    lines.push('### What dominates the time', '');
    lines.push(
      `One ${thousands(profile.tasks)}-task \`plan\` run under \`node --cpu-prof --cpu-prof-interval 250\` (${Math.round(main.busyMs)} ms sampled, ` +
        'idle excluded; the profiler slows the run a little). Positions in csv-wave are mapped back to src/ through the source maps.',
      '',
    );
    lines.push(dominates(main, startupMedian, median(secondsOf(large.plan)), large.tasks), '');
    const peakOf = (measures: Measure[]) => megabytes(Math.max(...measures.map((m) => m.maxRssKb)));
    const causes = knownCauses(main, peakOf(large.plan) - peakOf(large.validate));
    if (causes.length > 0) lines.push('Why, from reading the hot code:', '', ...causes, '');
    lines.push(...profileTable(main.byOwnFunction.slice(0, 10), main.busyMs, 'innermost csv-wave function (library calls included)'), '');
    lines.push(...profileTable(main.byLibrary.slice(0, 10), main.busyMs, 'library (node internals charged to the caller)'), '');
    lines.push(...profileTable(main.selfByModule.slice(0, 10), main.busyMs, 'module, self time'), '');
    lines.push(...profileTable(main.selfByFunction.slice(0, 12), main.busyMs, 'function, self time'), '');
  }
  return lines.join('\n').trimEnd();
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...kCommonOptions,
      sizes: { type: 'string' },
      'mean-deps': { type: 'string', default: '3' },
      seed: { type: 'string', default: '42' },
    },
    strict: true,
  });
  const options: Options = {
    ...commonOptions(values),
    sizes: (values.sizes ?? (values.quick ? '1000,10000' : '10000,100000')).split(',').map(Number),
    meanDeps: Number(values['mean-deps']),
    seed: Number(values.seed),
  };
  if (options.sizes.some((size) => !Number.isInteger(size) || size < 1)) fail('--sizes must list positive integers');
  options.sizes.sort((a, b) => a - b);
  return options;
}

async function benchmark(options: Options): Promise<void> {
  ensureBuilt(options.build);
  const loadAtStart = loadAverage();
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-plan-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    const run = (args: string[]) => timed({ node: args }, { cwd: scratch, scratch, rssMethod });
    console.log(`peak memory via ${rssMethod}; ${options.runs} runs per command`);
    const startup: Measure[] = [];
    for (let i = 0; i < options.runs; i++) startup.push(await run(['--version']));
    console.log(`start-up (--version): median ${seconds(median(secondsOf(startup)))} s`);

    const results: SizeResult[] = [];
    for (const tasks of options.sizes) {
      const dir = join(scratch, `dag-${tasks}`);
      const generated = generateDag({ tasks, meanDeps: options.meanDeps, seed: options.seed });
      writeSession(dir, generated);
      const tasksPath = join(dir, 'tasks.csv');
      // Warm-up run (page cache, code cache), not counted.
      const waves = checkValidate(await run(['validate', dir]), tasks);
      const result: SizeResult = { tasks, bytes: Buffer.byteLength(generated), waves, validate: [], plan: [] };
      for (let i = 0; i < options.runs; i++) {
        const validate = await run(['validate', dir]);
        checkValidate(validate, tasks);
        result.validate.push(validate);
        writeFileSync(tasksPath, generated);
        const plan = await run(['plan', dir]);
        await checkPlan(plan, tasksPath, generated);
        result.plan.push(plan);
        writeFileSync(tasksPath, generated);
        console.log(
          `${thousands(tasks)} tasks, run ${i + 1}: validate ${seconds(validate.seconds)} s ${megabytes(validate.maxRssKb)} MB, ` +
            `plan ${seconds(plan.seconds)} s ${megabytes(plan.maxRssKb)} MB`,
        );
      }
      results.push(result);
      if (tasks !== options.sizes[options.sizes.length - 1]) rmSync(dir, { recursive: true, force: true });
    }

    let profile: ProfiledRun | null = null;
    if (options.profile) {
      const biggest = options.sizes[options.sizes.length - 1]!;
      const dir = join(scratch, `dag-${biggest}`);
      const generated = generateDag({ tasks: biggest, meanDeps: options.meanDeps, seed: options.seed });
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'tasks.csv'), generated);
      profile = await profileCli(`one ${thousands(biggest)}-task plan`, biggest, ['plan', dir], { cwd: scratch, scratch, intervalUs: 250 });
      await checkPlan(profile.measure, join(dir, 'tasks.csv'), generated);
      for (const line of topCostLines(profile)) console.log(line);
    }
    publish('plan', renderSection(options, results, startup, rssMethod, profile, loadAtStart), options);
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = `npx tsx scripts/bench/plan.ts [--sizes 10000,100000] [--mean-deps 3] [--seed 42] ${kCommonUsage}`;

if (isMain(import.meta.url)) runMain('bench:plan', kUsage, () => benchmark(parseOptions(process.argv.slice(2))));
