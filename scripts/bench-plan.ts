/**
 * Plan benchmark (`npm run bench:plan`): times `csv-wave validate` and `csv-wave plan` on
 * random DAGs of 10,000 and 100,000 tasks (scripts/gen-dag.ts, mean deps 3, fixed seed),
 * as child processes of the built CLI (dist/cli/bin.js), and records the median wall time,
 * the peak RSS, the 100k/10k ratio and a CPU profile of one 100k plan in BENCHMARKS.md,
 * between the markers `<!-- bench:plan -->` and `<!-- /bench:plan -->` (the rest of the
 * file is left alone).
 *
 *   npx tsx scripts/bench-plan.ts [--runs 5] [--sizes 10000,100000] [--mean-deps 3]
 *                                 [--seed 42] [--no-profile] [--no-write] [--keep]
 *
 * Every plan run starts from the freshly generated file (empty wave column), so that plan
 * really fills the column and rewrites tasks.csv. Each plan run is checked: exit code 0,
 * every wave cell filled, and nothing else in the file changed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { generateDag } from './gen-dag.js';

const kRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const kBin = join(kRoot, 'dist', 'cli', 'bin.js');
const kMain = join(kRoot, 'dist', 'cli', 'main.js');
const kBenchmarksFile = join(kRoot, 'BENCHMARKS.md');
const kBeginMarker = '<!-- bench:plan -->';
const kEndMarker = '<!-- /bench:plan -->';
const kTimeBinary = '/usr/bin/time';

const kGoalSeconds = 3;
const kGoalMegabytes = 400;
const kGoalRatio = 12;

interface Options {
  runs: number;
  sizes: number[];
  meanDeps: number;
  seed: number;
  profile: boolean;
  write: boolean;
  keep: boolean;
}

interface Measure {
  seconds: number;
  /** Peak resident set size, in kilobytes (1024 bytes). */
  maxRssKb: number;
  stdout: string;
  stderr: string;
  status: number | null;
}

interface SizeResult {
  tasks: number;
  bytes: number;
  waves: number;
  validate: Measure[];
  plan: Measure[];
}

// ---------------------------------------------------------------------------------------
// Measuring one command

type RssMethod = 'gnu-time' | 'resource-usage';

/** GNU time (`-f %M -o FILE`) when it works here, else a node wrapper reading process.resourceUsage(). */
function detectRssMethod(scratch: string): RssMethod {
  if (!existsSync(kTimeBinary)) return 'resource-usage';
  const out = join(scratch, 'time-probe.txt');
  const probe = spawnSync(kTimeBinary, ['-f', '%M', '-o', out, process.execPath, '-e', '0'], { encoding: 'utf8' });
  const ok = probe.status === 0 && existsSync(out) && /^\d+\s*$/m.test(readFileSync(out, 'utf8'));
  rmSync(out, { force: true });
  return ok ? 'gnu-time' : 'resource-usage';
}

/** Runs `node dist/cli/bin.js ...args` once; wall time as seen by the parent (node start-up included). */
function runCli(args: string[], method: RssMethod, scratch: string): Measure {
  const rssFile = join(scratch, `rss-${process.pid}.txt`);
  rmSync(rssFile, { force: true });
  let command: string;
  let commandArgs: string[];
  if (method === 'gnu-time') {
    command = kTimeBinary;
    commandArgs = ['-f', '%M', '-o', rssFile, process.execPath, kBin, ...args];
  } else {
    // Same work as bin.js (import main, run it), then record the peak RSS on exit.
    const wrapper = [
      `import { writeFileSync } from 'node:fs';`,
      `const { main } = await import(${JSON.stringify(pathToFileURL(kMain).href)});`,
      `process.on('exit', () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));`,
      `process.exitCode = await main(process.argv.slice(1));`,
    ].join('\n');
    command = process.execPath;
    commandArgs = ['--input-type=module', '-e', wrapper, '--', ...args];
  }
  const start = process.hrtime.bigint();
  const child = spawnSync(command, commandArgs, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (child.error) throw child.error;
  let maxRssKb = Number.NaN;
  if (existsSync(rssFile)) {
    // GNU time may print "Command exited with non-zero status N" before the figure.
    const figures = readFileSync(rssFile, 'utf8').trim().split('\n');
    maxRssKb = Number(figures[figures.length - 1]);
    rmSync(rssFile, { force: true });
  }
  return { seconds, maxRssKb, stdout: child.stdout, stderr: child.stderr, status: child.status };
}

function fail(message: string): never {
  throw new Error(message);
}

function checkValidate(measure: Measure, tasks: number): number {
  const match = /^OK: (\d+) tasks, (\d+) waves$/m.exec(measure.stdout);
  if (measure.status !== 0 || !match || Number(match[1]) !== tasks) {
    fail(`validate failed (exit ${measure.status}):\n${measure.stdout}${measure.stderr.slice(0, 2000)}`);
  }
  return Number(match[2]);
}

/** plan must exit 0, fill every wave cell, and leave every other byte of the file as it was. */
function checkPlan(measure: Measure, tasksPath: string, generated: string): void {
  if (measure.status !== 0) fail(`plan failed (exit ${measure.status}):\n${measure.stderr.slice(0, 2000)}`);
  const written = readFileSync(tasksPath, 'utf8');
  if (/"csv-wave","","pending"/.test(written)) fail('plan left a wave cell empty');
  const unplanned = written.replace(/"csv-wave","\d+","pending"/g, '"csv-wave","","pending"');
  if (unplanned !== generated) fail('plan changed tasks.csv beyond the wave column');
}

// ---------------------------------------------------------------------------------------
// Statistics and formatting

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const seconds = (value: number) => value.toFixed(2);
const megabytes = (kb: number) => Math.round(kb / 1024);
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;
const thousands = (value: number) => value.toLocaleString('en-US');
const yesNo = (ok: boolean) => (ok ? '**yes**' : '**no**');

// ---------------------------------------------------------------------------------------
// CPU profile analysis

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileRow {
  name: string;
  ms: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by function (name + where it is defined). */
  selfByFunction: ProfileRow[];
  /** Self time by module: a src/ file, an npm package, node internals, GC, … */
  selfByModule: ProfileRow[];
  /**
   * Each sample charged to the innermost frame that is not node's own code, by module:
   * the library (or src/ file) that asked for the work, node internals it called included.
   */
  byLibrary: ProfileRow[];
  /**
   * Each sample charged to the innermost csv-wave function on its stack: the work a src/
   * function does itself or through the libraries it calls (not through other src/ functions).
   */
  byOwnFunction: ProfileRow[];
}

const sourceMaps = new Map<string, SourceMap | null>();

/** Maps a position in dist/*.js to src/*.ts through the emitted source map. */
function originalPosition(file: string, line: number, column: number): { file: string; line: number; name?: string } | null {
  if (!sourceMaps.has(file)) {
    let map: SourceMap | null = null;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as SourceMapPayload);
    } catch {
      map = null;
    }
    sourceMaps.set(file, map);
  }
  const entry = sourceMaps.get(file)?.findEntry(line, column);
  if (!entry || !('originalSource' in entry)) return null;
  const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
  const mapped = { file: relative(kRoot, source), line: entry.originalLine + 1 };
  return 'name' in entry && typeof entry.name === 'string' ? { ...mapped, name: entry.name } : mapped;
}

interface Located {
  /** The module the frame belongs to, e.g. `src/engine/validate.ts`, `zod`, `node:internal`. */
  module: string;
  /** Where the function is, e.g. `src/engine/validate.ts:28` or `zod/v4/core/schemas.js:120`. */
  where: string;
  /** True for csv-wave's own code. */
  own: boolean;
  /** The original name of a minified function, from its source map. */
  name?: string;
}

function locate(frame: CallFrame): Located {
  const { url, functionName } = frame;
  if (url === '') {
    const special = functionName.startsWith('(') ? functionName : '(native or eval code)';
    return { module: special, where: '', own: false };
  }
  if (url.startsWith('node:')) return { module: 'node:internal', where: url, own: false };
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) {
    const rest = path.slice(inModules + '/node_modules/'.length);
    const parts = rest.split('/');
    const pkg = parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
    // Minified packages (graphlib) ship source maps: show the original file, line and name.
    const original = originalPosition(path, frame.lineNumber, frame.columnNumber);
    if (original) {
      const file = original.file.replace(/^(.*\/)?node_modules\//, '');
      return { module: pkg, where: `${file}:${original.line}`, own: false, ...(original.name ? { name: original.name } : {}) };
    }
    return { module: pkg, where: `${rest}:${frame.lineNumber + 1}`, own: false };
  }
  const dist = join(kRoot, 'dist') + '/';
  if (path.startsWith(dist)) {
    const original = originalPosition(path, frame.lineNumber, frame.columnNumber);
    const file = original?.file ?? relative(kRoot, path);
    return { module: file, where: `${file}:${original?.line ?? frame.lineNumber + 1}`, own: true };
  }
  return { module: relative(kRoot, path), where: `${relative(kRoot, path)}:${frame.lineNumber + 1}`, own: false };
}

function sortedRows(map: Map<string, number>, limit: number): ProfileRow[] {
  return [...map.entries()]
    .map(([name, us]) => ({ name, ms: us / 1000 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit);
}

/** Sums self and inclusive time of a .cpuprofile by function and by module. */
export function summarizeProfile(profile: CpuProfile, limit = 12): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }
  const located = new Map<number, Located & { fn: string }>();
  for (const node of profile.nodes) {
    const where = locate(node.callFrame);
    const minified = node.callFrame.functionName.length <= 2 && where.name !== undefined;
    const name = minified ? `${where.name}` : node.callFrame.functionName || '(anonymous)';
    located.set(node.id, { ...where, fn: where.where === '' ? name : `${name} (${where.where})` });
  }

  // Sample i lasts until sample i+1; the last one gets the mean interval.
  const { samples, timeDeltas } = profile;
  const meanDelta = samples.length > 0 ? (profile.endTime - profile.startTime) / samples.length : 0;
  const selfFunction = new Map<string, number>();
  const selfModule = new Map<string, number>();
  const library = new Map<string, number>();
  const ownFunction = new Map<string, number>();
  let totalUs = 0;
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  for (let i = 0; i < samples.length; i++) {
    const us = Math.max(0, i + 1 < timeDeltas.length ? timeDeltas[i + 1]! : meanDelta);
    const leaf = located.get(samples[i]!);
    if (!leaf || leaf.module === '(idle)' || leaf.module === '(root)') continue;
    totalUs += us;
    add(selfFunction, leaf.fn, us);
    add(selfModule, leaf.module, us);
    if (leaf.module.startsWith('(')) {
      // GC, (program): V8 records them without a JavaScript stack.
      add(library, leaf.module, us);
      add(ownFunction, leaf.module, us);
      continue;
    }
    let libraryKey: string | null = null;
    let ownKey: string | null = null;
    for (let id: number | undefined = samples[i]; id !== undefined && ownKey === null; id = parentOf.get(id)) {
      const frame = located.get(id)!;
      if (libraryKey === null && frame.module !== 'node:internal' && !frame.module.startsWith('(')) libraryKey = frame.module;
      if (frame.own) ownKey = frame.fn;
    }
    add(library, libraryKey ?? 'node:internal', us);
    add(ownFunction, ownKey ?? '(no csv-wave frame: node start-up, module loading)', us);
  }
  return {
    totalMs: totalUs / 1000,
    selfByFunction: sortedRows(selfFunction, limit),
    selfByModule: sortedRows(selfModule, limit),
    byLibrary: sortedRows(library, limit),
    byOwnFunction: sortedRows(ownFunction, limit),
  };
}

function profilePlan(dir: string, tasksPath: string, generated: string, scratch: string): ProfileSummary {
  writeFileSync(tasksPath, generated);
  const profileDir = join(scratch, 'cpuprofile');
  rmSync(profileDir, { recursive: true, force: true });
  mkdirSync(profileDir);
  const child = spawnSync(
    process.execPath,
    ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', '250', kBin, 'plan', dir],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (child.status !== 0) fail(`profiled plan failed (exit ${child.status}):\n${child.stderr.slice(0, 2000)}`);
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) fail('node --cpu-prof wrote no profile');
  return summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile);
}

// ---------------------------------------------------------------------------------------
// The report

function gitRevision(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: kRoot, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: kRoot, encoding: 'utf8' });
  return `${head.stdout.trim()}${dirty.stdout.trim() !== '' ? ' (src/ has uncommitted changes)' : ''}`;
}

function profileTable(rows: ProfileRow[], totalMs: number, heading: string): string[] {
  const lines = [`| ${heading} | ms | share |`, '|---|---:|---:|'];
  for (const row of rows) lines.push(`| \`${row.name.replaceAll('|', '\\|')}\` | ${Math.round(row.ms)} | ${percent(row.ms, totalMs)} |`);
  return lines;
}

/** One paragraph naming what dominates, written from the profile's figures. */
function dominates(summary: ProfileSummary, startupSeconds: number, planSeconds: number): string {
  const total = summary.totalMs;
  const gc = summary.selfByModule.find((row) => row.name === '(garbage collector)')?.ms ?? 0;
  const parts: string[] = [
    `Node start-up and loading the CLI cost ${seconds(startupSeconds)} s of the ${seconds(planSeconds)} s median 100k plan; the rest grows with the file.`,
  ];
  const own = summary.byOwnFunction.filter((row) => !row.name.startsWith('('));
  if (own.length > 0) {
    const named = own.slice(0, 5).map((row) => `\`${row.name}\` ${percent(row.ms, total)}`);
    parts.push(`Charged to the innermost csv-wave function (its library calls included): ${named.join(', ')}.`);
  }
  const libraries = summary.byLibrary.filter((row) => !row.name.startsWith('('));
  if (libraries.length > 0) {
    const named = libraries.slice(0, 5).map((row) => `${row.name} ${percent(row.ms, total)}`);
    parts.push(`By library (node internals charged to their caller): ${named.join(', ')}.`);
  }
  parts.push(`The garbage collector takes ${percent(gc, total)} of the sampled time.`);
  return parts.join(' ');
}

/**
 * Causes found by reading a profile of this benchmark, printed only while the profile
 * still shows them (so the text does not outlive a fix).
 */
function knownCauses(summary: ProfileSummary, rewriteExtraMb: number): string[] {
  // Rows are named `module` or `function (file:line)`: match the name up to the location.
  const share = (rows: ProfileRow[], name: string) =>
    rows.filter((row) => row.name === name || row.name.startsWith(`${name} (`)).reduce((sum, row) => sum + row.ms, 0) / summary.totalMs;
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
      '- **Rewriting tasks.csv** (`serializeTasks`/`stringifyRecords` in src/csv/tasks-file.ts, `writeFileAtomic` in ' +
        'src/csv/atomic-write.ts): the table is first copied into a `string[][]`, csv-stringify builds each record by ' +
        'concatenating quoted fields (rope strings: many small heap objects per record) and keeps every record until ' +
        'one final `join`, and `writeSync` then encodes the joined text into a buffer; all of it is alive at once ' +
        `(${Math.round(rewriteExtraMb)} MB above \`validate\` at 100k).`,
    );
  }
  return notes;
}

function renderSection(
  options: Options,
  results: SizeResult[],
  startup: Measure[],
  rssMethod: RssMethod,
  profile: ProfileSummary | null,
  loadAtStart: string,
): string {
  const cpu = cpus();
  const lines: string[] = [];
  lines.push('## Plan: validate + plan', '');
  lines.push(
    'Random acyclic tasks.csv files (`scripts/gen-dag.ts`: Poisson-distributed deps, mean ' +
      `${options.meanDeps}, drawn uniformly from earlier tasks; context_from a subset of deps; seed ${options.seed}), ` +
      'checked with `csv-wave validate` and planned with `csv-wave plan` (which validates too, then fills the wave ' +
      'column and rewrites tasks.csv). Each command runs as a child process of the built CLI (`node dist/cli/bin.js`), ' +
      `${options.runs} times; wall time is measured by the parent and includes node start-up. Every plan run starts ` +
      'from the generated file (empty wave column) and is checked: every wave cell filled, no other byte changed.',
    '',
  );
  lines.push('- Command: `npm run bench:plan` (`tsx scripts/bench-plan.ts`)');
  lines.push(`- Date: ${new Date().toISOString()}`);
  lines.push(
    `- Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, ` +
      `${platform()} ${release()}; shared, so figures are noisy (load average ${loadAtStart} at the start, ${loadavg()[0]!.toFixed(1)} at the end)`,
  );
  lines.push(`- Node ${process.version}; csv-wave at ${gitRevision()}`);
  lines.push(`- Peak memory: maximum resident set size, ${rssMethod === 'gnu-time' ? '`/usr/bin/time -f %M`' : '`process.resourceUsage().maxRSS`'}, highest of the runs`);
  lines.push(`- Fixed cost: \`csv-wave --version\` (node start-up + loading the CLI) takes ${seconds(median(startup.map((m) => m.seconds)))} s (median)`);
  lines.push('');
  lines.push('| tasks | file MB | waves | validate median s (min–max) | plan median s (min–max) | peak MB validate | peak MB plan |');
  lines.push('|---:|---:|---:|---:|---:|---:|---:|');
  for (const result of results) {
    const v = result.validate.map((m) => m.seconds);
    const p = result.plan.map((m) => m.seconds);
    lines.push(
      `| ${thousands(result.tasks)} | ${(result.bytes / 2 ** 20).toFixed(1)} | ${result.waves} | ` +
        `${seconds(median(v))} (${seconds(Math.min(...v))}–${seconds(Math.max(...v))}) | ` +
        `${seconds(median(p))} (${seconds(Math.min(...p))}–${seconds(Math.max(...p))}) | ` +
        `${megabytes(Math.max(...result.validate.map((m) => m.maxRssKb)))} | ${megabytes(Math.max(...result.plan.map((m) => m.maxRssKb)))} |`,
    );
  }
  lines.push('');

  const small = results.find((r) => r.tasks === 10_000);
  const large = results.find((r) => r.tasks === 100_000);
  if (small && large) {
    const startupMedian = median(startup.map((m) => m.seconds));
    const vRatio = median(large.validate.map((m) => m.seconds)) / median(small.validate.map((m) => m.seconds));
    const pRatio = median(large.plan.map((m) => m.seconds)) / median(small.plan.map((m) => m.seconds));
    const net = (r: SizeResult, key: 'validate' | 'plan') => median(r[key].map((m) => m.seconds)) - startupMedian;
    const fastest = (r: SizeResult, key: 'validate' | 'plan') => Math.min(...r[key].map((m) => m.seconds));
    lines.push(
      `100k/10k ratio of the medians (same run): validate ${vRatio.toFixed(1)}, plan ${pRatio.toFixed(1)} ` +
        `(without the fixed start-up cost: validate ${(net(large, 'validate') / net(small, 'validate')).toFixed(1)}, ` +
        `plan ${(net(large, 'plan') / net(small, 'plan')).toFixed(1)}; ratio of the fastest runs, less sensitive to a busy ` +
        `machine: validate ${(fastest(large, 'validate') / fastest(small, 'validate')).toFixed(1)}, ` +
        `plan ${(fastest(large, 'plan') / fastest(small, 'plan')).toFixed(1)}; linear is 10).`,
      '',
    );
    const vMedian = median(large.validate.map((m) => m.seconds));
    const pMedian = median(large.plan.map((m) => m.seconds));
    const peakKb = Math.max(...large.validate.map((m) => m.maxRssKb), ...large.plan.map((m) => m.maxRssKb));
    lines.push('| goal (100,000 tasks, this machine) | measured | met |', '|---|---:|:---:|');
    lines.push(`| validate under ${kGoalSeconds} s | ${seconds(vMedian)} s | ${yesNo(vMedian < kGoalSeconds)} |`);
    lines.push(`| plan under ${kGoalSeconds} s | ${seconds(pMedian)} s | ${yesNo(pMedian < kGoalSeconds)} |`);
    lines.push(`| peak memory under ${kGoalMegabytes} MB | ${megabytes(peakKb)} MB | ${yesNo(megabytes(peakKb) < kGoalMegabytes)} |`);
    lines.push(`| 100k/10k time ratio at most ${kGoalRatio} | ${vRatio.toFixed(1)} / ${pRatio.toFixed(1)} | ${yesNo(vRatio <= kGoalRatio && pRatio <= kGoalRatio)} |`);
    lines.push('');
  }

  if (profile && large) {
    lines.push('### What dominates the time', '');
    lines.push(
      `One 100k \`plan\` run under \`node --cpu-prof --cpu-prof-interval 250\` (${Math.round(profile.totalMs)} ms sampled, ` +
        'idle excluded; the profiler slows the run a little). Positions in csv-wave are mapped back to src/ through the source maps.',
      '',
    );
    lines.push(dominates(profile, median(startup.map((m) => m.seconds)), median(large.plan.map((m) => m.seconds))), '');
    const peakOf = (measures: Measure[]) => megabytes(Math.max(...measures.map((m) => m.maxRssKb)));
    const causes = knownCauses(profile, peakOf(large.plan) - peakOf(large.validate));
    if (causes.length > 0) lines.push('Why, from reading the hot code:', '', ...causes, '');
    lines.push(...profileTable(profile.byOwnFunction.slice(0, 10), profile.totalMs, 'innermost csv-wave function (library calls included)'), '');
    lines.push(...profileTable(profile.byLibrary.slice(0, 10), profile.totalMs, 'library (node internals charged to the caller)'), '');
    lines.push(...profileTable(profile.selfByModule.slice(0, 10), profile.totalMs, 'module, self time'), '');
    lines.push(...profileTable(profile.selfByFunction.slice(0, 12), profile.totalMs, 'function, self time'), '');
  }
  return lines.join('\n').trimEnd();
}

/** Replaces this benchmark's section of BENCHMARKS.md (between its markers), leaving the rest as it is. */
function writeSection(section: string): void {
  const block = `${kBeginMarker}\n${section}\n${kEndMarker}`;
  let text = existsSync(kBenchmarksFile)
    ? readFileSync(kBenchmarksFile, 'utf8')
    : '# Benchmarks\n\nMeasured figures for csv-wave. Each section is written by its own script, between its\n' +
      'markers; re-run the script to refresh it, and edit text outside the markers freely.\n';
  const begin = text.indexOf(kBeginMarker);
  const end = text.indexOf(kEndMarker);
  if (begin >= 0 && end > begin) text = `${text.slice(0, begin)}${block}${text.slice(end + kEndMarker.length)}`;
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(kBenchmarksFile, text);
}

// ---------------------------------------------------------------------------------------

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '5' },
      sizes: { type: 'string', default: '10000,100000' },
      'mean-deps': { type: 'string', default: '3' },
      seed: { type: 'string', default: '42' },
      'no-profile': { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const options: Options = {
    runs: Number(values.runs),
    sizes: values.sizes.split(',').map(Number),
    meanDeps: Number(values['mean-deps']),
    seed: Number(values.seed),
    profile: !values['no-profile'],
    write: !values['no-write'],
    keep: values.keep,
  };
  if (!Number.isInteger(options.runs) || options.runs < 1) fail('--runs must be a positive integer');
  if (options.sizes.some((size) => !Number.isInteger(size) || size < 1)) fail('--sizes must list positive integers');
  return options;
}

/** Builds dist/ when it is missing or older than a file under src/. */
function ensureBuilt(): void {
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
      const path = join(dir, entry.name);
      return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }, 0);
  if (existsSync(kBin) && statSync(kBin).mtimeMs >= newest(join(kRoot, 'src'))) return;
  console.log('dist/ is missing or older than src/: building (tsc -p tsconfig.json)');
  const build = spawnSync(process.execPath, [join(kRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: kRoot,
    stdio: 'inherit',
  });
  if (build.status !== 0) fail('the build failed');
}

function benchmark(options: Options): void {
  ensureBuilt();
  const loadAtStart = loadavg()[0]!.toFixed(1);
  const scratch = mkdtempSync(join(tmpdir(), 'csv-wave-bench-plan-'));
  try {
    const rssMethod = detectRssMethod(scratch);
    console.log(`peak memory via ${rssMethod}; ${options.runs} runs per command`);
    const startup: Measure[] = [];
    for (let run = 0; run < options.runs; run++) startup.push(runCli(['--version'], rssMethod, scratch));
    console.log(`start-up (--version): median ${seconds(median(startup.map((m) => m.seconds)))} s`);

    const results: SizeResult[] = [];
    for (const tasks of options.sizes) {
      const dir = join(scratch, `dag-${tasks}`);
      mkdirSync(dir);
      const generated = generateDag({ tasks, meanDeps: options.meanDeps, seed: options.seed });
      const tasksPath = join(dir, 'tasks.csv');
      writeFileSync(tasksPath, generated);
      writeFileSync(join(dir, 'session.json'), `${JSON.stringify({ pipeline: 'generic' })}\n`);
      // Warm-up run (page cache, code cache), not counted.
      const waves = checkValidate(runCli(['validate', dir], rssMethod, scratch), tasks);
      const result: SizeResult = { tasks, bytes: Buffer.byteLength(generated), waves, validate: [], plan: [] };
      for (let run = 0; run < options.runs; run++) {
        const validate = runCli(['validate', dir], rssMethod, scratch);
        checkValidate(validate, tasks);
        result.validate.push(validate);
        writeFileSync(tasksPath, generated);
        const plan = runCli(['plan', dir], rssMethod, scratch);
        checkPlan(plan, tasksPath, generated);
        result.plan.push(plan);
        writeFileSync(tasksPath, generated);
        console.log(
          `${thousands(tasks)} tasks, run ${run + 1}: validate ${seconds(validate.seconds)} s ${megabytes(validate.maxRssKb)} MB, ` +
            `plan ${seconds(plan.seconds)} s ${megabytes(plan.maxRssKb)} MB`,
        );
      }
      results.push(result);
    }

    let profile: ProfileSummary | null = null;
    const biggest = options.sizes.reduce((a, b) => Math.max(a, b), 0);
    if (options.profile) {
      const dir = join(scratch, `dag-${biggest}`);
      const generated = generateDag({ tasks: biggest, meanDeps: options.meanDeps, seed: options.seed });
      profile = profilePlan(dir, join(dir, 'tasks.csv'), generated, scratch);
      console.log(`profile of one ${thousands(biggest)}-task plan: ${Math.round(profile.totalMs)} ms sampled`);
      for (const row of profile.byOwnFunction.slice(0, 6)) console.log(`  ${row.name}: ${percent(row.ms, profile.totalMs)}`);
    }

    const section = renderSection(options, results, startup, rssMethod, profile, loadAtStart);
    console.log(`\n${section}\n`);
    if (options.write) {
      writeSection(section);
      console.log(`wrote ${relative(process.cwd(), kBenchmarksFile) || kBenchmarksFile}`);
    }
  } finally {
    if (options.keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

try {
  benchmark(parseOptions(process.argv.slice(2)));
} catch (error) {
  console.error(`bench-plan: ${(error as Error).message}`);
  process.exitCode = 1;
}
