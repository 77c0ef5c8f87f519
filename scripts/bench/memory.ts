/**
 * Where a big run's memory goes (`npm run bench:memory`): runs `csv-wave run` of N no-op
 * module tasks (the sessions of scale.ts: 10 waves, one dep each, concurrency 64) and samples
 * the CLI process's resident set (/proc/PID/status VmRSS) every 100 ms, while watching the
 * session folder for the marks of its phases: tasks.csv's first rewrite (prepared), each
 * wave file (wave k started), context.md (the run's end), the temporary of report.html (a
 * report being written) and report.html itself. Prints the peak of each phase and the
 * process's own high-water mark (VmHWM), so that the phase that sets the peak is named.
 * Node's --trace-gc gives the heap left after each full collection: what was alive, against
 * what the collector let grow.
 *
 *   npx tsx scripts/bench/memory.ts [--tasks 100000] [--node-arg=--max-old-space-size=...] [--keep]
 *
 * A tool for finding out, not a goal: it writes nothing to BENCHMARKS.md. The peak at 1M
 * is scale.ts's figure.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLayeredDag } from '../gen-dag.js';
import { ensureBuilt, fail, fixed, isMain, kBin, loadAverage, readTasksCsv, runMain, thousands, writeSession } from './lib.js';

/** The sessions' waves: each task depends on one task of the wave before. */
export const kWaves = 10;
const kNoopModule = "export default async () => ({findings: ''});\n";

/** Writes SCRATCH/session (N no-op tasks in kWaves waves, seed 7, as scale.ts's runs) and SCRATCH/noop.mjs. */
export function writeNoopSession(scratch: string, tasks: number): { dir: string; modulePath: string } {
  const modulePath = join(scratch, 'noop.mjs');
  writeFileSync(modulePath, kNoopModule);
  const dir = writeSession(join(scratch, 'session'), generateLayeredDag({ tasks, layers: kWaves, minDeps: 1, maxDeps: 1, seed: 7 }));
  return { dir, modulePath };
}

interface Sample {
  ms: number;
  rssKb: number;
  /** The heap left by the latest full garbage collection (--trace-gc's Mark-Compact), MB: what was alive. */
  liveMb: number;
  phase: string;
}

/**
 * `[PID:0xISOLATE] … Mark-Compact 812.3 (840.1) -> 301.2 (330.5) MB` of --trace-gc: the heap
 * of that isolate (the main thread's or a worker thread's) after it.
 */
const kMarkCompact = /^\[\d+:(0x[0-9a-f]+)\].*Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/;

/** VmRSS and VmHWM of a process, in kB; undefined once it is gone. */
function memoryOf(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
    const memory = { rss: field('VmRSS'), hwm: field('VmHWM') };
    // A process on its way out has no memory fields any more.
    return Number.isNaN(memory.rss) || Number.isNaN(memory.hwm) ? undefined : memory;
  } catch {
    return undefined;
  }
}

/** The phase a session folder shows: the latest mark seen. */
function phaseWatcher(dir: string): () => string {
  const tasksPath = join(dir, 'tasks.csv');
  const first = statSync(tasksPath);
  const firstIdentity = `${first.ino}:${first.mtimeMs}`;
  let prepared = false;
  let waves = 0;
  let reports = 0;
  let lastReport = '';
  return () => {
    if (!prepared) {
      try {
        const stat = statSync(tasksPath);
        prepared = `${stat.ino}:${stat.mtimeMs}` !== firstIdentity;
      } catch {
        // between two renames
      }
    }
    while (existsSync(join(dir, `wave-${waves + 1}.csv`))) waves++;
    const engine = join(dir, '.csv-wave');
    const writing = existsSync(engine) && readdirSync(engine).some((name) => name.startsWith('report.html.') && name.endsWith('.tmp'));
    try {
      const stat = statSync(join(dir, 'report.html'));
      const identity = `${stat.ino}:${stat.mtimeMs}`;
      if (identity !== lastReport) {
        lastReport = identity;
        reports++;
      }
    } catch {
      // none yet
    }
    const ended = existsSync(join(dir, 'context.md'));
    if (writing) return `report.html #${reports + 1} being written${ended ? ' (final)' : ''}`;
    if (ended) return 'the end: tasks.csv, context.md, report.html';
    if (waves > 0) return `wave ${waves}${reports > 0 ? ` (report.html written ${reports} time(s))` : ''}`;
    return prepared ? 'prepared, no wave started' : 'start-up, read, validate, plan';
  };
}

async function measure(tasks: number, nodeArgs: readonly string[], keep: boolean): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'csv-wave-bench-memory-'));
  try {
    const { dir, modulePath } = writeNoopSession(scratch, tasks);
    const loadBefore = loadAverage();
    const started = performance.now();
    // --trace-gc prints to stdout, so the run's summary is taken from tasks.csv, not from --json.
    const child = spawn(process.execPath, ['--trace-gc', ...nodeArgs, kBin, 'run', dir, '--module', modulePath, '--concurrency', '64'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The heap left by each isolate's latest full collection; their sum is what was alive.
    const liveByIsolate = new Map<string, number>();
    let liveMb = 0;
    let liveMax = 0;
    let pending = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const after = kMarkCompact.exec(line);
        if (after) {
          liveByIsolate.set(after[1]!, Number(after[2]));
          liveMb = [...liveByIsolate.values()].reduce((sum, mb) => sum + mb, 0);
          liveMax = Math.max(liveMax, liveMb);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-8192)));
    const phase = phaseWatcher(dir);
    const samples: Sample[] = [];
    let hwm = 0;
    const sample = () => {
      const memory = memoryOf(child.pid!);
      if (memory === undefined) return;
      hwm = Math.max(hwm, memory.hwm);
      samples.push({ ms: performance.now() - started, rssKb: memory.rss, liveMb, phase: phase() });
    };
    const timer = setInterval(sample, 100);
    const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    clearInterval(timer);
    if (status !== 0) fail(`the run exited with ${status}:\n${stderr}`);
    const seconds = (performance.now() - started) / 1000;
    const { byStatus } = await readTasksCsv(join(dir, 'tasks.csv'));
    if (byStatus.get('completed') !== tasks) fail(`tasks.csv has ${byStatus.get('completed') ?? 0} completed rows of ${tasks}`);

    console.log(`${thousands(tasks)} tasks: ${fixed(seconds)} s, load ${loadBefore} → ${loadAverage()}`);
    console.log(`high-water mark of the CLI process (VmHWM): ${Math.round(hwm / 1024)} MB; largest sum of the isolates' heaps after their full GCs: ${Math.round(liveMax)} MB`);
    console.log('\n| phase (in order) | from s | to s | peak RSS MB | RSS at its end MB | heaps after the last full GCs MB |\n|---|---:|---:|---:|---:|---:|');
    let at = 0;
    while (at < samples.length) {
      let to = at;
      while (to + 1 < samples.length && samples[to + 1]!.phase === samples[at]!.phase) to++;
      const peak = Math.max(...samples.slice(at, to + 1).map((s) => s.rssKb));
      console.log(
        `| ${samples[at]!.phase} | ${fixed(samples[at]!.ms / 1000, 1)} | ${fixed(samples[to]!.ms / 1000, 1)} | ${Math.round(peak / 1024)} | ${Math.round(samples[to]!.rssKb / 1024)} | ${Math.round(samples[to]!.liveMb)} |`,
      );
      at = to + 1;
    }
  } finally {
    if (keep) console.log(`kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

export const kUsage = 'npx tsx scripts/bench/memory.ts [--tasks 100000] [--node-arg=--max-old-space-size=N] [--no-build] [--keep]';

if (isMain(import.meta.url)) {
  runMain('bench:memory', kUsage, async () => {
    const { values } = parseArgs({
      options: {
        tasks: { type: 'string', default: '100000' },
        'node-arg': { type: 'string', multiple: true, default: [] },
        'no-build': { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const tasks = Number(values.tasks);
    if (!Number.isInteger(tasks) || tasks < 1000) fail('--tasks must be an integer of at least 1,000');
    ensureBuilt(!values['no-build']);
    await measure(tasks, values['node-arg'], values.keep);
  });
}
