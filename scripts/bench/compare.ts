/**
 * Two builds of csv-wave on the same workloads, interleaved (`npm run bench:compare -- --old DIR`):
 * the figures that say whether a change made the engine slower. DIR is another checkout
 * with its dist/ built (e.g. `git worktree add /tmp/old REV && cd /tmp/old && npm ci`);
 * "new" is this checkout's dist/ (or `--new DIR`).
 *
 * The workloads are the headline cases of the other scripts, at their sizes:
 *   - plan: `csv-wave plan` of a random 100,000-task DAG (plan.ts);
 *   - true, print1k: 5,000 `true` / 1 KB-printing commands at concurrency 4 (run.ts);
 *   - dag: the same `true` in a layered DAG of 50 layers, 1.5 deps a task (dag.ts's shape);
 *   - waves: 100,000 no-op module tasks in 10 waves at concurrency 64 (run.ts);
 *   - latency: 5,000 module tasks sleeping 20-200 ms at concurrency 256 on 2 threads (latency.ts).
 *
 * Each round runs every workload on both builds, old first in odd rounds and new first in
 * even ones (so drift in the machine's load cancels). Every run is checked as in run.ts.
 * The section gives the medians and the median of the per-round new/old ratios of wall
 * time, CPU time and peak memory; it goes to BENCHMARKS.md only with --write.
 *
 *   npx tsx scripts/bench/compare.ts --old DIR [--new DIR] [--rounds 5] [--only plan,true,...]
 *                                    [--quick] [--dir PATH] [--write] [--keep]
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { generateDag, generateLayeredDag } from '../gen-dag.js';
import { kSleepModule } from './latency.js';
import {
  checkRun,
  detectRssMethod,
  fail,
  fixed,
  isMain,
  kBin,
  kRoot,
  loadAverage,
  machineLines,
  median,
  megabytes,
  publish,
  runMain,
  timed,
  writeSession,
  type Measure,
  type RssMethod,
} from './lib.js';
import { uniformDurations } from './workload.js';

interface Workload {
  key: string;
  what: string;
  /** The CLI's arguments after the session folder. */
  args: (scratch: string) => string[];
  csv: () => string;
  /** Rows in tasks.csv; `run` workloads are checked to have completed them all. */
  tasks: number;
  command: 'plan' | 'run';
}

const kNoopModule = "export default async () => ({findings: ''});\n";

function workloads(quick: boolean): Workload[] {
  const scale = quick ? 10 : 1;
  const plan = 100_000 / scale;
  const commands = 5_000 / scale;
  const waves = 100_000 / scale;
  const latency = 5_000 / scale;
  const durations = uniformDurations(latency, 20, 200, 3);
  return [
    { key: 'plan', what: `plan, ${plan.toLocaleString('en-US')} random tasks`, command: 'plan', tasks: plan, args: () => [], csv: () => generateDag({ tasks: plan, meanDeps: 3, seed: 42 }) },
    {
      key: 'true',
      what: `${commands.toLocaleString('en-US')} \`true\`, concurrency 4`,
      command: 'run',
      tasks: commands,
      args: () => ['--cmd', 'true', '--concurrency', '4'],
      csv: () => generateDag({ tasks: commands, meanDeps: 0, seed: 7 }),
    },
    {
      key: 'dag',
      what: `${commands.toLocaleString('en-US')} \`true\` in a layered DAG (1.5 deps each), concurrency 4`,
      command: 'run',
      tasks: commands,
      args: () => ['--cmd', 'true', '--concurrency', '4'],
      csv: () => generateLayeredDag({ tasks: commands, layers: 50, minDeps: 1, maxDeps: 2, seed: 27 }),
    },
    {
      key: 'print1k',
      what: `${commands.toLocaleString('en-US')} 1 KB-printing commands, concurrency 4`,
      command: 'run',
      tasks: commands,
      args: () => ['--cmd', "printf '%01023d\\n' 0", '--concurrency', '4'],
      csv: () => generateDag({ tasks: commands, meanDeps: 0, seed: 7 }),
    },
    {
      key: 'waves',
      what: `${waves.toLocaleString('en-US')} no-op modules in 10 waves, concurrency 64`,
      command: 'run',
      tasks: waves,
      args: (scratch) => ['--module', join(scratch, 'noop.mjs'), '--concurrency', '64'],
      csv: () => generateLayeredDag({ tasks: waves, layers: 10, minDeps: 1, maxDeps: 1, seed: 7 }),
    },
    {
      key: 'latency',
      what: `${latency.toLocaleString('en-US')} modules sleeping 20-200 ms, concurrency 256, 2 threads`,
      command: 'run',
      tasks: latency,
      args: (scratch) => ['--module', join(scratch, 'sleep.mjs'), '--concurrency', '256', '--threads', '2'],
      csv: () => generateLayeredDag({ tasks: latency, layers: 1, minDeps: 1, maxDeps: 1, seed: 3, extraColumns: { ms: durations.map(String) } }),
    },
  ];
}

interface Build {
  name: 'old' | 'new';
  dir: string;
  bin: string;
  revision: string;
}

function build(name: Build['name'], dir: string): Build {
  const bin = join(dir, 'dist', 'cli', 'bin.js');
  if (!existsSync(bin)) fail(`--${name} ${dir}: no dist/cli/bin.js there (run \`npm ci\` or \`npm run build\` in it)`);
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' });
  return { name, dir, bin, revision: head.status === 0 ? head.stdout.trim() : 'unknown' };
}

async function runOnce(workload: Workload, target: Build, scratch: string, rssMethod: RssMethod, csv: string, index: number): Promise<Measure> {
  const dir = writeSession(join(scratch, `${workload.key}-${target.name}-${index}`), csv);
  const json = workload.command === 'run' ? ['--json'] : [];
  const measure = await timed({ node: [workload.command, dir, ...workload.args(scratch), ...json] }, { cwd: scratch, scratch, rssMethod, bin: target.bin });
  const what = `${target.name} build (${target.revision}): ${workload.what}`;
  if (workload.command === 'run') await checkRun(measure, dir, workload.tasks, what);
  else if (measure.status !== 0) fail(`${what} exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

interface Figures {
  old: Measure[];
  new: Measure[];
}

const ratio = (figures: Figures, pick: (measure: Measure) => number) =>
  median(figures.new.map((measure, round) => pick(measure) / pick(figures.old[round]!)));

function section(rows: { workload: Workload; figures: Figures }[], builds: Build[], rounds: number, loadAtStart: string, rssMethod: RssMethod): string {
  const lines = [
    '## Compare: two builds, interleaved',
    '',
    `The same workloads on two builds of csv-wave, ${rounds} round(s), old and new alternating first (\`scripts/bench/compare.ts\`). ` +
      'Each run is a child process of that build\'s CLI and is checked as in the run benchmark. Ratios are new/old, the median of the per-round ratios.',
    '',
    ...machineLines('scripts/bench/compare.ts', 'bench:compare', loadAtStart, [
      `- Builds: old ${builds[0]!.revision}, new ${builds[1]!.revision}; CPU and peak memory from ${rssMethod === 'gnu-time' ? 'GNU time' : 'process.resourceUsage()'}`,
    ]),
    '',
    '| workload | old wall s | new wall s | wall new/old | old CPU s | new CPU s | CPU new/old | old peak MB | new peak MB | peak new/old |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { workload, figures } of rows) {
    const med = (list: Measure[], pick: (measure: Measure) => number) => median(list.map(pick));
    lines.push(
      `| ${workload.what} | ${fixed(med(figures.old, (m) => m.seconds))} | ${fixed(med(figures.new, (m) => m.seconds))} | ${fixed(ratio(figures, (m) => m.seconds))} ` +
        `| ${fixed(med(figures.old, (m) => m.cpuSeconds))} | ${fixed(med(figures.new, (m) => m.cpuSeconds))} | ${fixed(ratio(figures, (m) => m.cpuSeconds))} ` +
        `| ${megabytes(med(figures.old, (m) => m.maxRssKb))} | ${megabytes(med(figures.new, (m) => m.maxRssKb))} | ${fixed(ratio(figures, (m) => m.maxRssKb))} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      old: { type: 'string' },
      new: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      dir: { type: 'string' },
      write: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.old === undefined) fail('--old DIR is required: a checkout of the build to compare against, with dist/ built');
  const rounds = Number(values.rounds ?? (values.quick ? 1 : 5));
  if (!Number.isInteger(rounds) || rounds < 1) fail(`--rounds must be a positive integer, not ${values.rounds}`);
  const builds = [build('old', resolve(values.old)), values.new === undefined ? { ...build('new', kRoot), bin: kBin } : build('new', resolve(values.new))];
  let chosen = workloads(values.quick);
  if (values.only !== undefined) {
    const keys = values.only.split(',');
    const unknown = keys.filter((key) => !chosen.some((workload) => workload.key === key));
    if (unknown.length > 0) fail(`--only: no workload ${unknown.join(', ')} (there are ${chosen.map((w) => w.key).join(', ')})`);
    chosen = chosen.filter((workload) => keys.includes(workload.key));
  }
  const base = resolve(values.dir ?? process.env['TMPDIR'] ?? '/tmp');
  const scratch = mkdtempSync(join(base, 'csv-wave-compare-'));
  writeFileSync(join(scratch, 'noop.mjs'), kNoopModule);
  writeFileSync(join(scratch, 'sleep.mjs'), kSleepModule);
  const rssMethod = detectRssMethod(scratch);
  const loadAtStart = loadAverage();
  try {
    const rows: { workload: Workload; figures: Figures }[] = [];
    for (const workload of chosen) {
      const csv = workload.csv();
      const figures: Figures = { old: [], new: [] };
      // One small run of each build first (page cache, node's code cache), not counted.
      for (const target of builds) await runOnce(workload, target, scratch, rssMethod, csv, 0);
      for (let round = 1; round <= rounds; round++) {
        const order = round % 2 === 1 ? builds : [...builds].reverse();
        for (const target of order) {
          const measure = await runOnce(workload, target, scratch, rssMethod, csv, round);
          figures[target.name].push(measure);
          console.log(`${workload.key} round ${round} ${target.name}: ${fixed(measure.seconds)} s wall, ${fixed(measure.cpuSeconds)} s CPU, ${megabytes(measure.maxRssKb)} MB (load ${loadAverage()})`);
        }
      }
      rows.push({ workload, figures });
    }
    publish('compare', section(rows, builds, rounds, loadAtStart, rssMethod), { write: values.write });
  } finally {
    if (!values.keep) rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  runMain('compare', 'npx tsx scripts/bench/compare.ts --old DIR [--new DIR] [--rounds 5] [--only plan,true,print1k,waves,latency] [--quick] [--dir PATH] [--write] [--keep]', main);
}
