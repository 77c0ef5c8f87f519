/**
 * What the benchmark scripts under scripts/bench/ share: where things are, building dist/,
 * timing a child process with its peak RSS and CPU time, the machine facts, statistics and
 * formatting, the checks of a finished run, and the writer of a BENCHMARKS.md section.
 * CPU profiles are in profile.ts.
 *
 * The benchmarks are scripts, never timed tests: each times child processes of the built
 * CLI (`node dist/cli/bin.js`), computes its ratios inside one run with the compared runs
 * interleaved (so that a shared machine's drift cancels), and writes its own section of
 * BENCHMARKS.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
/** A flag's value as a positive integer, or the script ends naming the flag. */
export function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) fail(`--${flag} must be a positive integer, got ${JSON.stringify(text)}`);
  return value;
}

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
  /** The CLI a `{ node }` command runs: this checkout's dist/cli/bin.js unless given (compare.ts runs another build). */
  bin?: string;
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
  const bin = options.bin ?? kBin;
  let file: string;
  let args: string[];
  if (options.rssMethod === 'gnu-time') {
    const inner = 'node' in command ? [process.execPath, ...nodeArgs, bin, ...command.node] : [...command];
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
        `await import(${JSON.stringify(pathToFileURL(bin).href)});`,
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
// Random numbers for workloads

/** Standard normal draws from a uniform PRNG (Box–Muller). */
export function normal(random: () => number): number {
  const u = Math.max(random(), Number.MIN_VALUE);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
