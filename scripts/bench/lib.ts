/**
 * What the benchmark scripts under scripts/bench/ share: where things are, building dist/,
 * timing a child process with its peak RSS and CPU time, CPU profiles of every thread
 * summarised by cost (source-mapped back to src/), the machine facts, statistics and
 * formatting, the checks of a finished run, and the writer of a BENCHMARKS.md section.
 *
 * The benchmarks are scripts, never timed tests: each times child processes of the built
 * CLI (`node dist/cli/bin.js`), computes its ratios inside one run with the compared runs
 * interleaved (so that a shared machine's drift cancels), and writes its own section of
 * BENCHMARKS.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'csv-parse';

export const kRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const kBin = join(kRoot, 'dist', 'cli', 'bin.js');
export const kBenchmarksFile = join(kRoot, 'BENCHMARKS.md');
const kTimeBinary = '/usr/bin/time';

// ---------------------------------------------------------------------------------------
// Scripts

export function fail(message: string): never {
  throw new Error(message);
}

/** True when the module at `url` (pass `import.meta.url`) is the script node was started with. */
export function isMain(url: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(url));
  } catch {
    return false;
  }
}

/**
 * Runs a script's main function and turns a thrown error into a message and exit code 1
 * (2, with the usage, for a bad command line; --help prints the usage).
 */
export function runMain(name: string, usage: string, main: () => Promise<void>): void {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(`usage: ${usage}`);
    return;
  }
  let started: Promise<void>;
  try {
    started = main();
  } catch (error) {
    started = Promise.reject(error);
  }
  started.catch((error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    const badUsage = typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
    console.error(`${name}: ${error instanceof Error ? error.message : String(error)}${badUsage ? `\nusage: ${usage}` : ''}`);
    process.exitCode = badUsage ? 2 : 1;
  });
}

/** Builds dist/ when it is missing or older than a file under src/ (skip with `build: false`). */
export function ensureBuilt(build = true): void {
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
      const path = join(dir, entry.name);
      return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }, 0);
  const stale = !existsSync(kBin) || statSync(kBin).mtimeMs < newest(join(kRoot, 'src'));
  if (!stale) return;
  if (!build) {
    if (!existsSync(kBin)) fail('dist/ is missing: run `npm run build` (or drop --no-build)');
    console.log('warning: dist/ is older than src/; --no-build, so the figures are those of the last build');
    return;
  }
  console.log('dist/ is missing or older than src/: building (tsc -p tsconfig.json)');
  const tsc = spawnSync(process.execPath, [join(kRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: kRoot,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) fail('the build failed (pass --no-build to measure the dist/ there is)');
}

/** The options every benchmark script takes, for node:util parseArgs. */
export const kCommonOptions = {
  quick: { type: 'boolean', default: false },
  runs: { type: 'string' },
  dir: { type: 'string' },
  'no-profile': { type: 'boolean', default: false },
  write: { type: 'boolean', default: false },
  'no-write': { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
} as const;

export interface CommonOptions {
  quick: boolean;
  /** Runs per measure: 5 by default, 2 with --quick. */
  runs: number;
  /** Where scratch folders go (default: the system temp folder). */
  dir: string;
  profile: boolean;
  /** Write BENCHMARKS.md: yes by default, not with --quick unless --write. */
  write: boolean;
  build: boolean;
  keep: boolean;
}

export function commonOptions(values: {
  quick?: boolean | undefined;
  runs?: string | undefined;
  dir?: string | undefined;
  'no-profile'?: boolean | undefined;
  write?: boolean | undefined;
  'no-write'?: boolean | undefined;
  'no-build'?: boolean | undefined;
  keep?: boolean | undefined;
}): CommonOptions {
  const quick = values.quick ?? false;
  const runs = values.runs !== undefined ? Number(values.runs) : quick ? 2 : 5;
  if (!Number.isInteger(runs) || runs < 1) fail('--runs must be a positive integer');
  if (values.write && values['no-write']) fail('--write and --no-write contradict each other');
  const dir = resolve(values.dir ?? process.env['TMPDIR'] ?? '/tmp');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) fail(`--dir ${dir} is not a folder`);
  return {
    quick,
    runs,
    dir,
    profile: !values['no-profile'],
    write: (values.write ?? false) || (!values['no-write'] && !quick),
    build: !values['no-build'],
    keep: values.keep ?? false,
  };
}

export const kCommonUsage =
  '[--quick] [--runs N] [--dir PATH] [--no-profile] [--write | --no-write] [--no-build] [--keep]';

// ---------------------------------------------------------------------------------------
// Statistics and formatting

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
export const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
export const megabytes = (kb: number) => (Number.isFinite(kb) ? Math.round(kb / 1024) : Number.NaN);
export const thousands = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
export const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–');
export const yesNo = (ok: boolean) => (ok ? '**yes**' : '**no**');
/** `median (min–max)`. */
export const spread = (values: readonly number[], digits = 2) =>
  `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})`;

/** Prints a goal as met or missed, with its figure; returns whether it was met. */
export function printGoal(what: string, met: boolean, figure: string): boolean {
  console.log(`goal ${met ? 'MET   ' : 'MISSED'} ${what}: ${figure}`);
  return met;
}

/** The markdown table of goals: rows of [goal, measured, met]. */
export function goalTable(rows: readonly (readonly [string, string, boolean])[]): string[] {
  return ['| goal (this machine) | measured | met |', '|---|---:|:---:|', ...rows.map(([goal, measured, met]) => `| ${goal} | ${measured} | ${yesNo(met)} |`)];
}

// ---------------------------------------------------------------------------------------
// Timing a child process

export type RssMethod = 'gnu-time' | 'resource-usage';

export interface Measure {
  /** Wall time seen from here, process start-up included. */
  seconds: number;
  /** Peak resident set size in KiB (the whole process, worker threads included); NaN when unknown. */
  maxRssKb: number;
  /** User + system CPU seconds of the process; NaN when unknown. */
  cpuSeconds: number;
  status: number | null;
  signal: NodeJS.Signals | null;
  /** The process started: node itself for `{ node }` without GNU time, else GNU time or the command. */
  pid: number | undefined;
  stdout: string;
  /** The last 64 KiB of stderr. */
  stderr: string;
}

/** GNU time (`-f '%M %U %S' -o FILE`) when it works here, else a node wrapper reading process.resourceUsage(). */
export function detectRssMethod(scratch: string): RssMethod {
  if (!existsSync(kTimeBinary)) return 'resource-usage';
  const out = join(scratch, 'time-probe.txt');
  const probe = spawnSync(kTimeBinary, ['-f', '%M %U %S', '-o', out, process.execPath, '-e', '0'], { encoding: 'utf8' });
  const ok = probe.status === 0 && existsSync(out) && /^\d+ [\d.]+ [\d.]+\s*$/m.test(readFileSync(out, 'utf8'));
  rmSync(out, { force: true });
  return ok ? 'gnu-time' : 'resource-usage';
}

export function rssMethodText(method: RssMethod): string {
  return method === 'gnu-time' ? '`/usr/bin/time -f %M`' : '`process.resourceUsage().maxRSS`';
}

export interface TimedOptions {
  cwd: string;
  /** Where the figures file of GNU time (or the wrapper) goes. */
  scratch: string;
  rssMethod: RssMethod;
  /** Node flags before bin.js (a `{ node }` command only), e.g. --cpu-prof. */
  nodeArgs?: readonly string[];
  /** Variables added to this process's environment for the child (and its own children). */
  env?: Readonly<Record<string, string>>;
  /** Send stdout to this file instead of keeping it. */
  stdoutFile?: string;
  /** Called every intervalMs while the child runs (watching its files, printing progress). */
  poll?: { intervalMs: number; tick: (elapsedMs: number) => void };
}

let figuresCounter = 0;

/**
 * Runs a command and measures its wall time from here, its peak RSS and CPU time.
 * `{ node: args }` is the csv-wave CLI: `node dist/cli/bin.js ...args` (without GNU time,
 * a wrapper that records process.resourceUsage() on exit, then imports bin.js; that counts
 * the CLI's own process only, where GNU time also counts the child processes it waited for).
 */
export function timed(command: readonly string[] | { node: readonly string[] }, options: TimedOptions): Promise<Measure> {
  const figuresFile = join(options.scratch, `figures-${process.pid}-${++figuresCounter}.txt`);
  const nodeArgs = options.nodeArgs ?? [];
  let file: string;
  let args: string[];
  if (options.rssMethod === 'gnu-time') {
    const inner = 'node' in command ? [process.execPath, ...nodeArgs, kBin, ...command.node] : [...command];
    file = kTimeBinary;
    args = ['-f', '%M %U %S', '-o', figuresFile, ...inner];
  } else if ('node' in command) {
    // A file, not `--input-type=module -e`: worker threads inherit the flags of their
    // process, and --input-type=module would apply to the code piscina evaluates in them.
    const wrapper = `${figuresFile}.mjs`;
    writeFileSync(
      wrapper,
      [
        `import { writeFileSync } from 'node:fs';`,
        `process.on('exit', () => { const u = process.resourceUsage(); writeFileSync(${JSON.stringify(figuresFile)}, ` +
          '`${u.maxRSS} ${u.userCPUTime / 1e6} ${u.systemCPUTime / 1e6}`); });',
        // bin.js reads process.argv.slice(2): the wrapper stands where bin.js would.
        `await import(${JSON.stringify(pathToFileURL(kBin).href)});`,
      ].join('\n'),
    );
    file = process.execPath;
    args = [...nodeArgs, wrapper, ...command.node];
  } else {
    [file, ...args] = command as [string, ...string[]];
  }
  const stdoutFd = options.stdoutFile !== undefined ? openSync(options.stdoutFile, 'w') : undefined;
  return new Promise<Measure>((resolvePromise, reject) => {
    const started = performance.now();
    const env = options.env ? { ...process.env, ...options.env } : process.env;
    const child = spawn(file, args, { cwd: options.cwd, env, stdio: ['ignore', stdoutFd ?? 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-65536);
    });
    const poller = options.poll
      ? setInterval(() => options.poll!.tick(performance.now() - started), options.poll.intervalMs)
      : undefined;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      if (poller) clearInterval(poller);
      if (stdoutFd !== undefined) closeSync(stdoutFd);
      rmSync(`${figuresFile}.mjs`, { force: true });
      return true;
    };
    child.on('error', (error) => {
      if (settle()) reject(error);
    });
    child.on('close', (status, signal) => {
      const seconds = (performance.now() - started) / 1000;
      if (!settle()) return;
      let maxRssKb = Number.NaN;
      let cpuSeconds = Number.NaN;
      if (existsSync(figuresFile)) {
        // GNU time may print "Command exited with non-zero status N" before the figures.
        const lines = readFileSync(figuresFile, 'utf8').trim().split('\n');
        const [rss, user, system] = (lines[lines.length - 1] ?? '').trim().split(/\s+/).map(Number);
        maxRssKb = rss ?? Number.NaN;
        cpuSeconds = (user ?? Number.NaN) + (system ?? Number.NaN);
        rmSync(figuresFile, { force: true });
      }
      resolvePromise({ seconds, maxRssKb, cpuSeconds, status, signal, pid: child.pid, stdout: Buffer.concat(stdout).toString('utf8'), stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------
// Sessions and the checks of a finished run

/** Writes DIR/tasks.csv and DIR/session.json ({"pipeline":"generic"}). */
export function writeSession(dir: string, tasksCsv: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tasks.csv'), tasksCsv);
  writeFileSync(join(dir, 'session.json'), `${JSON.stringify({ pipeline: 'generic' })}\n`);
  return dir;
}

export interface RunSummaryJson {
  total: number;
  counts: Record<string, number>;
  durationMs: number;
  stopped?: string | false;
  exitCode: number;
}

/** Status counts and rows of a tasks.csv, read as a stream (a million rows fit). */
export async function readTasksCsv(path: string, keep?: (row: Record<string, string>) => void): Promise<{ rows: number; byStatus: Map<string, number> }> {
  const byStatus = new Map<string, number>();
  let rows = 0;
  const parser = createReadStream(path).pipe(parse({ columns: true, bom: true, skip_empty_lines: true }));
  for await (const record of parser as AsyncIterable<Record<string, string>>) {
    rows++;
    const status = record['status'] ?? '';
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    keep?.(record);
  }
  return { rows, byStatus };
}

/** What a watcher saw of a session while its run went: tasks.csv rewrites and the journal's size. */
export interface DurabilityWatch {
  /** Distinct tasks.csv files seen (an atomic rewrite is a new inode or mtime). */
  rewrites: number;
  /** Largest size of .csv-wave/journal.ndjson seen, in bytes. */
  journalPeakBytes: number;
  /** Wave files (wave-N.csv) seen: the waves started so far. */
  waves: number;
  tick: () => void;
}

/** Watches a session folder: call tick() from a poll; reads only stat()s. */
export function watchSession(dir: string): DurabilityWatch {
  let last = '';
  const tasksPath = join(dir, 'tasks.csv');
  const journalPath = join(dir, '.csv-wave', 'journal.ndjson');
  const watch: DurabilityWatch = {
    rewrites: 0,
    journalPeakBytes: 0,
    waves: 0,
    tick: () => {
      try {
        const stat = statSync(tasksPath);
        const identity = `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
        if (identity !== last) {
          last = identity;
          watch.rewrites++;
        }
      } catch {
        // between unlink and rename: not on POSIX rename, but be safe
      }
      try {
        watch.journalPeakBytes = Math.max(watch.journalPeakBytes, statSync(journalPath).size);
      } catch {
        // no journal yet
      }
      while (existsSync(join(dir, `wave-${watch.waves + 1}.csv`))) watch.waves++;
    },
  };
  watch.tick();
  watch.rewrites = 0; // the generated file is not a rewrite
  return watch;
}

export interface RunCheck {
  summary: RunSummaryJson;
  /** Bytes left in the journal at the end (0 after the final checkpoint). */
  journalBytes: number;
  discoveryFiles: number;
}

/**
 * A finished run must have exited 0, and its --json summary, tasks.csv (every row
 * completed) and the journal (present, every line whole) must all account for every task.
 * The benchmark sessions are generic (`discovery_files: when-rich`): only a task whose
 * findings went to an artifact gets a discovery file; any other would mean the policy broke.
 */
export async function checkRun(measure: Measure, dir: string, tasks: number, what: string): Promise<RunCheck> {
  if (measure.status !== 0) fail(`${what} exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  let summary: RunSummaryJson;
  try {
    summary = JSON.parse(measure.stdout) as RunSummaryJson;
  } catch {
    fail(`${what}: --json printed something that is not JSON:\n${measure.stdout.slice(0, 2000)}`);
  }
  if (summary.total !== tasks || summary.counts['completed'] !== tasks) {
    fail(`${what}: the summary says ${summary.counts['completed']} of ${summary.total} completed, expected ${tasks}`);
  }
  const { rows, byStatus } = await readTasksCsv(join(dir, 'tasks.csv'));
  if (rows !== tasks || byStatus.get('completed') !== tasks) {
    fail(`${what}: tasks.csv has ${byStatus.get('completed') ?? 0} completed row(s) of ${rows}, expected ${tasks} of ${tasks}`);
  }
  const journalPath = join(dir, '.csv-wave', 'journal.ndjson');
  if (!existsSync(journalPath)) fail(`${what}: no journal at ${journalPath}`);
  const journal = readFileSync(journalPath, 'utf8');
  for (const line of journal.split('\n')) {
    if (line === '') continue;
    try {
      JSON.parse(line);
    } catch {
      fail(`${what}: a torn line in the journal: ${line.slice(0, 200)}`);
    }
  }
  const discoveries = join(dir, 'discoveries');
  const discoveryNames = existsSync(discoveries) ? readdirSync(discoveries).filter((name) => name.endsWith('.json')) : [];
  // A result too long for its cell has an artifact (one folder per task: artifacts/<id>/<name>.md),
  // and may have a discovery file with it; a plain result never has one.
  const artifacts = join(dir, 'artifacts');
  const plain = discoveryNames.filter((name) => !existsSync(join(artifacts, name.slice(0, -'.json'.length))));
  if (plain.length > 0) {
    fail(`${what}: ${plain.length} discovery file(s) of tasks without an artifact, such as discoveries/${plain[0]}`);
  }
  return { summary, journalBytes: Buffer.byteLength(journal), discoveryFiles: discoveryNames.length };
}

/** Milliseconds to create one small file in `dir` (median of 3 rounds of 1,000), like a discovery file. */
export function fileCreationMs(dir: string): number {
  const rounds: number[] = [];
  for (let round = 0; round < 3; round++) {
    const folder = join(dir, `create-probe-${process.pid}-${round}`);
    mkdirSync(folder);
    const started = performance.now();
    for (let index = 0; index < 1000; index++) writeFileSync(join(folder, `${index}.json`), '{"probe": true}\n');
    rounds.push((performance.now() - started) / 1000);
    rmSync(folder, { recursive: true, force: true });
  }
  return median(rounds);
}

// ---------------------------------------------------------------------------------------
// Machine facts

export function gitRevision(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: kRoot, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: kRoot, encoding: 'utf8' });
  return `${head.stdout.trim()}${dirty.stdout.trim() !== '' ? ' (src/ has uncommitted changes)' : ''}`;
}

export function parallelVersion(): string | undefined {
  const version = spawnSync('parallel', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0 || version.error) return undefined;
  return version.stdout.split('\n')[0]?.trim() || 'GNU parallel (unknown version)';
}

export const loadAverage = () => loadavg()[0]!.toFixed(1);

/**
 * The bullet lines every section starts with: the command that produced it, the date, the
 * machine (cores, memory, load), Node and the csv-wave revision.
 */
export function machineLines(script: string, npmScript: string, loadAtStart: string, extra: readonly string[] = []): string[] {
  const cpu = cpus();
  const args = process.argv.slice(2);
  return [
    `- Command: \`npx tsx ${script}${args.length > 0 ? ` ${args.join(' ')}` : ''}\` (\`npm run ${npmScript}\` runs it with the default options)`,
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, ` +
      `${platform()} ${release()}; shared, so figures are noisy (load average ${loadAtStart} at the start, ${loadAverage()} at the end)`,
    `- Node ${process.version}; csv-wave at ${gitRevision()}`,
    ...extra,
  ];
}

// ---------------------------------------------------------------------------------------
// BENCHMARKS.md

/** Replaces the section NAME of BENCHMARKS.md (between its markers, re-read just before), leaving the rest as it is. */
export function writeSection(name: string, section: string): void {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${begin}\n${section.trimEnd()}\n${end}`;
  let text = existsSync(kBenchmarksFile)
    ? readFileSync(kBenchmarksFile, 'utf8')
    : '# Benchmarks\n\nMeasured figures for csv-wave. Each section is written by its own script, between its\n' +
      'markers; re-run the script to refresh it, and edit text outside the markers freely.\n';
  const at = text.indexOf(begin);
  const to = text.indexOf(end);
  if (at >= 0 && to > at) text = `${text.slice(0, at)}${block}${text.slice(to + end.length)}`;
  else text = `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(kBenchmarksFile, text);
  console.log(`wrote the ${name} section of ${relative(process.cwd(), kBenchmarksFile) || kBenchmarksFile}`);
}

/** Prints the section, and writes it unless told not to. */
export function publish(name: string, section: string, options: Pick<CommonOptions, 'write'>): void {
  console.log(`\n${section}\n`);
  if (options.write) writeSection(name, section);
  else console.log('BENCHMARKS.md not written (--quick or --no-write; --write forces it)');
}

// ---------------------------------------------------------------------------------------
// CPU profiles

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

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  ms: number;
}

/**
 * Where a profiled thread ran: the CLI process's main thread, one of its worker threads,
 * or a node process the CLI started (a launcher of commands, a command that is a node script).
 */
export type ThreadKind = 'main' | 'worker' | 'process';

export interface ThreadSummary {
  /** `main` or `worker N` in the CLI's process (N = node's thread id); `process P` or `process P worker N` in another (P = its pid). */
  thread: string;
  kind: ThreadKind;
  wallMs: number;
  /** Sampled time outside `(idle)` and piscina's wait for work. */
  busyMs: number;
  gcMs: number;
  /** A piscina worker blocked in Atomics.wait for its next task (not CPU). */
  waitMs: number;
  /** Self time by function (name + where it is defined). */
  selfByFunction: ProfileRow[];
  /** Self time by module: a src/ file, an npm package, node internals, GC, … */
  selfByModule: ProfileRow[];
  /** Each sample charged to the innermost frame that is not node's own code, by module. */
  byLibrary: ProfileRow[];
  /**
   * Each sample charged to the innermost csv-wave function on its stack: the work a src/
   * function does itself or through the libraries and node calls under it.
   */
  byOwnFunction: ProfileRow[];
  /** Every cost (byOwnFunction's key, unlimited) with the self frames under it, in µs. */
  costs: Map<string, Map<string, number>>;
}

const sourceMaps = new Map<string, SourceMap | null>();

/** Maps a position in a .js file to its source through the file's source map, if it has one. */
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
  /** The module the frame belongs to, e.g. `src/engine/validate.ts`, `zod`, `node:internal`, `(native)`. */
  module: string;
  /** `name (where:line)`, or a special name such as `(garbage collector)`. */
  fn: string;
  /** True for csv-wave's own code (dist/, mapped to src/). */
  own: boolean;
  special: 'idle' | 'wait' | 'gc' | 'program' | undefined;
}

function locate(frame: CallFrame): Located {
  const { url, functionName } = frame;
  const fn = functionName || '(anonymous)';
  if (url === '') {
    if (fn === '(idle)' || fn === '(root)') return { module: fn, fn, own: false, special: 'idle' };
    if (fn === '(garbage collector)') return { module: fn, fn, own: false, special: 'gc' };
    if (fn === '(program)') return { module: fn, fn, own: false, special: 'program' };
    // A native function: fs and other bindings, Atomics.wait, …
    return { module: '(native)', fn: `${fn} (native)`, own: false, special: undefined };
  }
  if (url.startsWith('node:')) return { module: 'node:internal', fn: `${fn} (${url}:${frame.lineNumber + 1})`, own: false, special: undefined };
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) {
    const rest = path.slice(inModules + '/node_modules/'.length);
    const parts = rest.split('/');
    const pkg = parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
    // piscina's worker blocks in Atomics.wait while it has no task: waiting, not work.
    const wait = pkg === 'piscina' && functionName === 'atomicsWaitLoop' ? 'wait' : undefined;
    // Minified packages ship source maps: show the original file, line and name.
    const original = originalPosition(path, frame.lineNumber, frame.columnNumber);
    if (original) {
      const file = original.file.replace(/^(.*\/)?node_modules\//, '');
      const name = functionName.length <= 2 && original.name ? original.name : fn;
      return { module: pkg, fn: `${name} (${file}:${original.line})`, own: false, special: wait };
    }
    return { module: pkg, fn: `${fn} (${rest}:${frame.lineNumber + 1})`, own: false, special: wait };
  }
  const dist = join(kRoot, 'dist') + '/';
  if (path.startsWith(dist)) {
    const original = originalPosition(path, frame.lineNumber, frame.columnNumber);
    const file = original?.file ?? relative(kRoot, path);
    return { module: file, fn: `${fn} (${file}:${original?.line ?? frame.lineNumber + 1})`, own: true, special: undefined };
  }
  const file = path.startsWith(kRoot) ? relative(kRoot, path) : path.split('/').slice(-1)[0]!;
  return { module: file, fn: `${fn} (${file}:${frame.lineNumber + 1})`, own: false, special: undefined };
}

function sortedRows(map: Map<string, number>, limit: number): ProfileRow[] {
  return [...map.entries()]
    .map(([name, us]) => ({ name, ms: us / 1000 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit);
}

/** Summarises one thread's .cpuprofile: self time by function and module, and time charged to csv-wave functions. */
export function summarizeProfile(thread: string, kind: ThreadKind, profile: CpuProfile, limit = 12): ThreadSummary {
  const parentOf = new Map<number, number>();
  const located = new Map<number, Located>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parentOf.set(child, node.id);
    located.set(node.id, locate(node.callFrame));
  }
  // The cost a sample is charged to, by leaf node (the same for every sample of a node).
  const costKey = new Map<number, string>();
  const libraryKey = new Map<number, string>();
  const keysOf = (leafId: number): { cost: string; library: string } => {
    const known = costKey.get(leafId);
    if (known !== undefined) return { cost: known, library: libraryKey.get(leafId)! };
    const leaf = located.get(leafId)!;
    let library: string | undefined;
    let own: string | undefined;
    for (let id: number | undefined = leafId; id !== undefined && own === undefined; id = parentOf.get(id)) {
      const frame = located.get(id)!;
      if (library === undefined && frame.special === undefined && frame.module !== 'node:internal' && frame.module !== '(native)') {
        library = frame.module;
      }
      if (frame.own) own = frame.fn;
    }
    library ??= 'node:internal';
    let cost: string;
    if (leaf.special === 'gc' || leaf.special === 'program') cost = leaf.fn;
    else if (own !== undefined) cost = own;
    else if (library !== 'node:internal') cost = `${library} (no csv-wave function on the stack)`;
    else cost = 'node internals, no csv-wave function on the stack (start-up, module loading, event loop)';
    costKey.set(leafId, cost);
    libraryKey.set(leafId, library);
    return { cost, library };
  };

  // Sample i lasts until sample i+1; the last one gets the mean interval.
  const { samples, timeDeltas } = profile;
  const meanDelta = samples.length > 0 ? (profile.endTime - profile.startTime) / samples.length : 0;
  const selfFunction = new Map<string, number>();
  const selfModule = new Map<string, number>();
  const library = new Map<string, number>();
  const ownFunction = new Map<string, number>();
  const costs = new Map<string, Map<string, number>>();
  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
  let busyUs = 0;
  let gcUs = 0;
  let waitUs = 0;
  for (let i = 0; i < samples.length; i++) {
    const us = Math.max(0, i + 1 < timeDeltas.length ? timeDeltas[i + 1]! : meanDelta);
    const leaf = located.get(samples[i]!);
    if (!leaf || leaf.special === 'idle') continue;
    if (leaf.special === 'wait') {
      waitUs += us;
      continue;
    }
    busyUs += us;
    if (leaf.special === 'gc') gcUs += us;
    add(selfFunction, leaf.fn, us);
    add(selfModule, leaf.module, us);
    const keys = keysOf(samples[i]!);
    add(library, leaf.special ? leaf.fn : keys.library, us);
    add(ownFunction, keys.cost, us);
    let inside = costs.get(keys.cost);
    if (!inside) costs.set(keys.cost, (inside = new Map()));
    add(inside, leaf.fn, us);
  }
  return {
    thread,
    kind,
    wallMs: (profile.endTime - profile.startTime) / 1000,
    busyMs: busyUs / 1000,
    gcMs: gcUs / 1000,
    waitMs: waitUs / 1000,
    selfByFunction: sortedRows(selfFunction, limit),
    selfByModule: sortedRows(selfModule, limit),
    byLibrary: sortedRows(library, limit),
    byOwnFunction: sortedRows(ownFunction, limit),
    costs,
  };
}

export interface ProfiledRun {
  label: string;
  tasks: number;
  measure: Measure;
  /** The CLI's main thread first, then its workers by thread id, then other node processes by pid. */
  threads: ThreadSummary[];
}

/** What node names a profile file: CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile (thread 0: the main thread). */
function profileFileIds(name: string): { pid: number; tid: number } | undefined {
  const parts = name.split('.');
  const pid = Number(parts[3]);
  const tid = Number(parts[4]);
  return parts.length === 7 && Number.isInteger(pid) && Number.isInteger(tid) ? { pid, tid } : undefined;
}

const kProfilePreload = join(kRoot, 'scripts', 'bench', 'profile-preload.cjs');

/**
 * Runs the CLI once under `node --cpu-prof` and summarises the profile of every thread of
 * every node process that wrote one. Worker threads inherit the flags, and so does a node
 * process the CLI forks with its own execArgv (child_process.fork's default). Node refuses
 * --cpu-prof in NODE_OPTIONS, so a node process started otherwise (a launcher with flags of
 * its own) is profiled by profile-preload.cjs, required through NODE_OPTIONS, as long as it
 * inherits the environment. A process killed before it exits writes no profile. The run is
 * not checked here.
 */
export async function profileCli(
  label: string,
  tasks: number,
  args: readonly string[],
  options: { cwd: string; scratch: string; intervalUs?: number },
): Promise<ProfiledRun> {
  const profileDir = join(options.scratch, `cpuprofile-${process.pid}-${++figuresCounter}`);
  mkdirSync(profileDir, { recursive: true });
  const intervalUs = String(options.intervalUs ?? 1000);
  const nodeArgs = ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', intervalUs];
  const inherited = process.env['NODE_OPTIONS'];
  const preload = `--require ${JSON.stringify(kProfilePreload)}`;
  const env = {
    NODE_OPTIONS: inherited ? `${inherited} ${preload}` : preload,
    CSV_WAVE_BENCH_PROFILE_DIR: profileDir,
    CSV_WAVE_BENCH_PROFILE_INTERVAL_US: intervalUs,
  };
  // Without GNU time in between, the process started is the CLI's own: its pid names its profiles.
  const measure = await timed({ node: args }, { cwd: options.cwd, scratch: options.scratch, rssMethod: 'resource-usage', nodeArgs, env });
  const files = readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'));
  if (files.length === 0) fail(`node --cpu-prof wrote no profile (exit ${measure.status}):\n${measure.stderr.slice(-2000)}`);
  const entries = files.map((name) => {
    const ids = profileFileIds(name) ?? fail(`a profile file named unlike node's own: ${name}`);
    const ours = ids.pid === measure.pid;
    const kind: ThreadKind = ours ? (ids.tid === 0 ? 'main' : 'worker') : 'process';
    const owner = ours ? '' : `process ${ids.pid}`;
    const thread = ids.tid === 0 ? owner || 'main' : `${owner} worker ${ids.tid}`.trimStart();
    return { ...ids, ours, name, thread, kind };
  });
  if (!entries.some((entry) => entry.kind === 'main')) {
    fail(`no profile of the CLI's main thread (pid ${measure.pid}) among ${files.join(', ')}`);
  }
  const threads = entries
    .sort((a, b) => Number(b.ours) - Number(a.ours) || a.pid - b.pid || a.tid - b.tid)
    .map((entry) => summarizeProfile(entry.thread, entry.kind, JSON.parse(readFileSync(join(profileDir, entry.name), 'utf8')) as CpuProfile));
  rmSync(profileDir, { recursive: true, force: true });
  return { label, tasks, measure, threads };
}

export interface Cost {
  name: string;
  ms: number;
  /** Share of the busy time of all threads together. */
  share: number;
  /** Where the time went, e.g. `main 1,200 ms, workers 300 ms`. */
  where: string;
  /** The self frames under it, biggest first. */
  inside: ProfileRow[];
}

/** The biggest costs of a profiled run, all threads together, by the innermost csv-wave function (GC and V8's own work apart). */
export function topCosts(threads: readonly ThreadSummary[], count = 3): Cost[] {
  const total = new Map<string, number>();
  const byThread = new Map<string, Record<ThreadKind, number>>();
  const inside = new Map<string, Map<string, number>>();
  for (const thread of threads) {
    for (const [name, frames] of thread.costs) {
      let sum = 0;
      let merged = inside.get(name);
      if (!merged) inside.set(name, (merged = new Map()));
      for (const [frame, us] of frames) {
        sum += us;
        merged.set(frame, (merged.get(frame) ?? 0) + us);
      }
      total.set(name, (total.get(name) ?? 0) + sum);
      const split = byThread.get(name) ?? { main: 0, worker: 0, process: 0 };
      split[thread.kind] += sum;
      byThread.set(name, split);
    }
  }
  const busyMs = threads.reduce((sum, thread) => sum + thread.busyMs, 0);
  return sortedRows(total, count).map((row) => {
    const split = byThread.get(row.name)!;
    const where = [
      split.main > 0 ? `main thread ${thousands(split.main / 1000)} ms` : '',
      split.worker > 0 ? `worker threads ${thousands(split.worker / 1000)} ms` : '',
      split.process > 0 ? `other node processes ${thousands(split.process / 1000)} ms` : '',
    ]
      .filter((part) => part !== '')
      .join(', ');
    return { name: row.name, ms: row.ms, share: busyMs > 0 ? row.ms / busyMs : 0, where, inside: sortedRows(inside.get(row.name)!, 3) };
  });
}

/** `12.3 µs per task` or `4.56 ms per task`. */
function perTask(ms: number, tasks: number): string {
  const us = (1000 * ms) / Math.max(1, tasks);
  return us >= 1000 ? `${fixed(us / 1000)} ms per task` : `${fixed(us, 1)} µs per task`;
}

/** ` (N of them in other node processes)`, or nothing when the CLI's process is the only one profiled. */
function otherProcesses(run: ProfiledRun): string {
  const others = run.threads.filter((thread) => thread.kind === 'process').length;
  return others > 0 ? ` (${others} of them in other node processes)` : '';
}

/** Markdown: "Top three remaining costs" of one profiled run, as a numbered list. */
export function topCostLines(run: ProfiledRun, count = 3): string[] {
  const busyMs = run.threads.reduce((sum, thread) => sum + thread.busyMs, 0);
  const lines = [
    `**${run.label}**: ${fixed(run.measure.seconds)} s under the profiler, ${run.threads.length} thread profile(s)${otherProcesses(run)}, ` +
      `${thousands(busyMs)} ms of CPU sampled (idle and piscina's wait for work excluded), ${perTask(busyMs, run.tasks)}.`,
    '',
  ];
  topCosts(run.threads, count).forEach((cost, index) => {
    const under = cost.inside
      .map((row) => `${row.name === cost.name ? 'its own code' : `\`${row.name}\``} ${percent(row.ms, cost.ms)}`)
      .join(', ');
    const onlyItself = cost.inside.length === 0 || (cost.inside.length === 1 && cost.inside[0]!.name === cost.name);
    lines.push(
      `${index + 1}. \`${cost.name}\`: ${thousands(cost.ms)} ms, ${(100 * cost.share).toFixed(1)}% of the CPU time ` +
        `(${cost.where}; ${perTask(cost.ms, run.tasks)})${onlyItself ? '' : `; of which ${under}`}.`,
    );
  });
  return lines;
}

/** Markdown table of profile rows. */
export function profileTable(rows: readonly ProfileRow[], totalMs: number, heading: string): string[] {
  const lines = [`| ${heading} | ms | share |`, '|---|---:|---:|'];
  for (const row of rows) lines.push(`| \`${row.name.replaceAll('|', '\\|')}\` | ${Math.round(row.ms)} | ${percent(row.ms, totalMs)} |`);
  return lines;
}

/** One table per thread: self time by call frame. */
export function threadTables(run: ProfiledRun, rows = 8): string[] {
  const lines: string[] = [];
  for (const thread of run.threads) {
    lines.push(
      ...profileTable(
        thread.selfByFunction.slice(0, rows),
        thread.busyMs,
        `${thread.thread}: self time by call frame (busy ${Math.round(thread.busyMs)} of ${Math.round(thread.wallMs)} ms)`,
      ),
      '',
    );
  }
  return lines;
}

export const kProfileMethod =
  'Profiles: `node --cpu-prof`; worker threads inherit the flag and write their own profiles. A node process the CLI starts ' +
  "(`process P`: a launcher of commands, say) is profiled too, by --cpu-prof if forked with the CLI's flags, else by " +
  '`scripts/bench/profile-preload.cjs` through NODE_OPTIONS (node refuses --cpu-prof there); one that drops the environment ' +
  'or is killed before it exits has no profile, and its time is missing here. csv-wave positions are ' +
  'mapped back to src/ through the source maps, `(native)` marks C++ bindings such as fs calls. A cost is the CPU time ' +
  'charged to the innermost csv-wave function on the stack (the libraries and node calls under it included); garbage ' +
  'collection and `(program)` (V8 compiling, parsing, runtime calls) have no stack and stand apart.';

// ---------------------------------------------------------------------------------------
// Random numbers for workloads

/** Standard normal draws from a uniform PRNG (Box–Muller). */
export function normal(random: () => number): number {
  const u = Math.max(random(), Number.MIN_VALUE);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
