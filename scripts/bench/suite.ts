/**
 * The test suite's own time (issue 27, goal 7): `npm test` at most 5 minutes on this
 * machine when idle, and the unit tier alone under 60 s.
 *
 * `npm test` is `typecheck && circular && vitest run`; each step runs here on its own, as
 * `npm test` runs it, under GNU time (wall from here; user + system CPU of the step and
 * every process it waited for). Then `npm run test:unit` runs alone. vitest's run writes
 * every test file's wall and CPU time (test/helpers/summary-reporter.ts, through
 * $CSV_WAVE_TEST_TIMES), and the section lists the costliest files. CPU time hardly grows
 * with the machine's load; wall time does, so each step shows the load average beside it.
 *
 *   npx tsx scripts/bench/suite.ts [--unit-only] [--write | --no-write] [--no-build]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { detectRssMethod, ensureBuilt, fail, fixed, isMain, kRoot, loadAverage, machineLines, publish, runMain, timed, yesNo } from './lib.js';

/** Above this load average (on the shared 2-core box) a figure does not count as met. */
const kQuietLoad = 2;
/** The goals: `npm test` in 5 minutes, the unit tier in a minute. */
const kSuiteGoalSeconds = 300;
const kUnitGoalSeconds = 60;
/** How many of the costliest test files the section names. */
const kFilesShown = 15;

interface Step {
  name: string;
  command: string;
  seconds: number;
  cpuSeconds: number;
  loadBefore: string;
  loadAfter: string;
  /** vitest's closing line (`vitest: N passed, ...`), for the vitest steps. */
  tests?: string;
}

/** One test file's times, as the summary reporter writes them. */
interface FileTimes {
  file: string;
  project: string;
  tests: number;
  wallMs: number;
  cpuMs?: number;
}

/** Runs `command` (words) from the project's root under GNU time. */
async function step(name: string, command: readonly string[], scratch: string, env: Record<string, string> = {}): Promise<Step> {
  const text = command.join(' ');
  const loadBefore = loadAverage();
  console.log(`${name}: ${text} (load ${loadBefore})`);
  const measure = await timed(command, { cwd: kRoot, scratch, rssMethod: 'gnu-time', env });
  const loadAfter = loadAverage();
  if (measure.status !== 0) fail(`\`${text}\` failed (exit ${String(measure.status)}): a suite that fails is not timed\n${measure.stdout.slice(-4000)}${measure.stderr.slice(-4000)}`);
  const tests = /^vitest: .*$/m.exec(measure.stdout)?.[0];
  console.log(`  ${fixed(measure.seconds, 1)} s wall, ${fixed(measure.cpuSeconds, 1)} s CPU (load ${loadAfter} at the end)${tests ? `; ${tests}` : ''}`);
  return { name, command: text, seconds: measure.seconds, cpuSeconds: measure.cpuSeconds, loadBefore, loadAfter, ...(tests ? { tests } : {}) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'unit-only': { type: 'boolean', default: false }, write: { type: 'boolean', default: false }, 'no-write': { type: 'boolean', default: false }, 'no-build': { type: 'boolean', default: false } },
  });
  if (values.write && values['no-write']) fail('--write and --no-write contradict each other');
  const unitOnly = values['unit-only'];
  // A whole run writes BENCHMARKS.md unless told not to; --unit-only measures a part only.
  const write = values.write || (!values['no-write'] && !unitOnly);
  // vitest's global setup builds dist/ too; building it first keeps that build out of the figures.
  ensureBuilt(!values['no-build']);
  const scratch = mkdtempSync(join(process.env['TMPDIR'] ?? '/tmp', 'csv-wave-bench-suite-'));
  if (detectRssMethod(scratch) !== 'gnu-time') fail('this benchmark needs GNU time (/usr/bin/time) for the CPU time of the steps and their children');
  const loadAtStart = loadAverage();
  const uptimeBefore = readFileSync('/proc/loadavg', 'utf8').trim();
  const timesFile = join(scratch, 'files.json');
  const steps: Step[] = [];
  try {
    if (!unitOnly) {
      steps.push(await step('typecheck', ['npm', 'run', '--silent', 'typecheck'], scratch));
      steps.push(await step('circular', ['npm', 'run', '--silent', 'circular'], scratch));
      steps.push(await step('vitest', ['npx', 'vitest', 'run'], scratch, { CSV_WAVE_TEST_TIMES: timesFile }));
    }
    steps.push(await step('unit tier', ['npm', 'run', '--silent', 'test:unit'], scratch, unitOnly ? { CSV_WAVE_TEST_TIMES: timesFile } : {}));
    const files = JSON.parse(readFileSync(timesFile, 'utf8')) as FileTimes[];
    const uptimeAfter = readFileSync('/proc/loadavg', 'utf8').trim();
    publish('suite', section(steps, files, unitOnly, loadAtStart, uptimeBefore, uptimeAfter), { write });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function section(steps: readonly Step[], files: readonly FileTimes[], unitOnly: boolean, loadAtStart: string, uptimeBefore: string, uptimeAfter: string): string {
  const suiteSteps = steps.filter((row) => row.name !== 'unit tier');
  const suiteSeconds = suiteSteps.reduce((sum, row) => sum + row.seconds, 0);
  const unit = steps.find((row) => row.name === 'unit tier')!;
  const peakLoad = Math.max(...steps.flatMap((row) => [Number(row.loadBefore), Number(row.loadAfter)]));
  const quiet = peakLoad <= kQuietLoad;
  const verdict = (met: boolean) => (quiet ? yesNo(met) : `${met ? 'within' : 'over'}, but at load ${fixed(peakLoad, 1)} (above ${kQuietLoad}): does not count`);
  const cpuOf = (row: FileTimes) => row.cpuMs ?? 0;
  const costliest = [...files].sort((a, b) => cpuOf(b) - cpuOf(a)).slice(0, kFilesShown);
  const slowest = [...files].sort((a, b) => b.wallMs - a.wallMs).slice(0, kFilesShown);
  const byProject = new Map<string, { files: number; tests: number; cpuMs: number }>();
  for (const row of files) {
    const sum = byProject.get(row.project) ?? { files: 0, tests: 0, cpuMs: 0 };
    sum.files++;
    sum.tests += row.tests;
    sum.cpuMs += cpuOf(row);
    byProject.set(row.project, sum);
  }
  // The file times come from the vitest step of the whole suite, or from the unit tier's with --unit-only.
  const timedStep = unitOnly ? unit : steps.find((row) => row.name === 'vitest')!;
  const filesCpuSeconds = files.reduce((sum, row) => sum + cpuOf(row), 0) / 1000;
  const fileRow = (row: FileTimes) => `| ${row.file} | ${row.project} | ${row.tests} | ${fixed(cpuOf(row) / 1000, 1)} | ${fixed(row.wallMs / 1000, 1)} |`;
  return [
    '## The test suite',
    '',
    ...machineLines(`scripts/bench/suite.ts`, 'bench:suite', loadAtStart, [`- /proc/loadavg before: \`${uptimeBefore}\`; after: \`${uptimeAfter}\``]),
    '',
    `Each step of \`npm test\` runs on its own, under GNU time: wall from the script, CPU (user + system) of the step and every process it waited for.`,
    'CPU time hardly grows with the load; wall time does.',
    '',
    '| step | command | wall s | CPU s | load at start → end | tests |',
    '|---|---|---:|---:|---|---|',
    ...steps.map((row) => `| ${row.name} | \`${row.command}\` | ${fixed(row.seconds, 1)} | ${fixed(row.cpuSeconds, 1)} | ${row.loadBefore} → ${row.loadAfter} | ${row.tests ?? ''} |`),
    '',
    ...(unitOnly
      ? []
      : [`- \`npm test\` (the first three steps): ${fixed(suiteSeconds, 1)} s; goal ≤ ${kSuiteGoalSeconds} s: ${verdict(suiteSeconds <= kSuiteGoalSeconds)}`]),
    `- The unit tier alone: ${fixed(unit.seconds, 1)} s; goal < ${kUnitGoalSeconds} s: ${verdict(unit.seconds < kUnitGoalSeconds)}`,
    '',
    `- CPU outside the test files (\`${timedStep.command}\`: vitest's main process, its transforms, each file's worker starting): ` +
      `${fixed(timedStep.cpuSeconds - filesCpuSeconds, 1)} s of ${fixed(timedStep.cpuSeconds, 1)} s`,
    '',
    `Test files by project (CPU of each file's process and the processes it reaped, from its import to its teardown; vitest's own start-up of each file is not in it):`,
    '',
    '| project | files | tests | CPU s |',
    '|---|---:|---:|---:|',
    ...[...byProject].map(([project, sum]) => `| ${project} | ${sum.files} | ${sum.tests} | ${fixed(sum.cpuMs / 1000, 1)} |`),
    '',
    `The ${kFilesShown} costliest test files (CPU):`,
    '',
    '| file | project | tests | CPU s | wall s |',
    '|---|---|---:|---:|---:|',
    ...costliest.map(fileRow),
    '',
    `The ${kFilesShown} slowest test files (wall, other files running beside):`,
    '',
    '| file | project | tests | CPU s | wall s |',
    '|---|---|---:|---:|---:|',
    ...slowest.map(fileRow),
  ].join('\n');
}

if (isMain(import.meta.url)) runMain('bench:suite', 'npx tsx scripts/bench/suite.ts [--unit-only] [--write | --no-write] [--no-build]', main);
