/**
 * CPU profiles of a benchmarked run: `node --cpu-prof` on the CLI (its worker threads
 * inherit the flag), profile-preload.cjs for the node processes it starts, every thread's
 * profile summarised by cost (positions source-mapped back to src/), and the markdown of
 * the top costs and per-thread tables that the sections of BENCHMARKS.md show.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fail, fixed, kRoot, percent, thousands, timed, type Measure } from './lib.js';

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
  /** The module the frame belongs to, e.g. `src/commands/validate.ts`, `zod`, `node:internal`, `(native)`. */
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
let profileCounter = 0;

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
  const profileDir = join(options.scratch, `cpuprofile-${process.pid}-${++profileCounter}`);
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
