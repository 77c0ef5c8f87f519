/**
 * The baselines csv-wave's run benchmark is set against, on the same work: GNU parallel and
 * `xargs -P` on the same shell commands, and a raw piscina loop making the same no-op
 * module calls. Each is a timed child process whose output is checked like csv-wave's.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { taskId } from '../gen-dag.js';
import { fail, kRoot, timed, type Measure, type RssMethod } from './lib.js';

/** A shell command run once per task; it prints `outputBytes` bytes. */
export interface ShellCommand {
  command: string;
  outputBytes: number;
}

/** Where a baseline runs: the scratch folder, how peak memory is read, the jobs at once. */
export interface BaselineOptions {
  scratch: string;
  rssMethod: RssMethod;
  concurrency: number;
}

export const kRawLoop = join(kRoot, 'scripts', 'bench', 'raw-piscina', 'loop.mjs');

let counter = 0;

/** A fresh folder holding the task ids, one a line (the jobs' input for parallel and xargs). */
function idsFolder(scratch: string, name: string, tasks: number): { dir: string; ids: string } {
  const dir = join(scratch, `${name}-${tasks}-${++counter}`);
  mkdirSync(dir);
  const ids = join(dir, 'ids.txt');
  writeFileSync(ids, Array.from({ length: tasks }, (_, index) => `${taskId(index)}\n`).join(''));
  return { dir, ids };
}

function checkOutputBytes(tool: string, output: string, tasks: number, command: ShellCommand): void {
  const bytes = statSync(output).size;
  if (bytes !== tasks * command.outputBytes) fail(`${tool} printed ${bytes} bytes, expected ${tasks * command.outputBytes}`);
}

/** The GNU parallel command line: the id as an argument to a command that ignores it, or none (-N0) for printf. */
export function parallelArgs(command: ShellCommand, concurrency: number, joblog = 'F', ids = 'IDS'): string[] {
  return ['parallel', '-j', String(concurrency), ...(command.outputBytes > 0 ? ['-N0'] : []), '--joblog', joblog, '-a', ids, command.command];
}

/** GNU parallel on the same rows, its output to a file; checked: its joblog has every job, all exit 0, and the output size. */
export async function runParallel(tasks: number, command: ShellCommand, options: BaselineOptions): Promise<Measure> {
  const { dir, ids } = idsFolder(options.scratch, 'parallel', tasks);
  const joblog = join(dir, 'joblog.tsv');
  const output = join(dir, 'output.txt');
  const measure = await timed(parallelArgs(command, options.concurrency, joblog, ids), {
    cwd: dir,
    scratch: options.scratch,
    rssMethod: options.rssMethod,
    stdoutFile: output,
  });
  if (measure.status !== 0) fail(`parallel exited with ${measure.status}:\n${measure.stderr.slice(-3000)}`);
  const lines = readFileSync(joblog, 'utf8').trim().split('\n').slice(1);
  const ok = lines.filter((line) => line.split('\t')[6] === '0').length;
  if (lines.length !== tasks || ok !== tasks) fail(`parallel's joblog has ${ok} successful job(s) of ${lines.length}, expected ${tasks}`);
  checkOutputBytes('parallel', output, tasks, command);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

/**
 * The xargs command line: one `/bin/sh -c COMMAND` per id (the id is the shell's $1, unused),
 * as csv-wave runs a task's command, CONCURRENCY at once.
 */
export function xargsArgs(command: ShellCommand, concurrency: number, ids = 'IDS'): string[] {
  return ['xargs', '-P', String(concurrency), '-n', '1', '-a', ids, '/bin/sh', '-c', command.command, 'sh'];
}

/**
 * `xargs -P` on the same commands, its output to a file. Checked: exit 0 (xargs exits 123
 * when any command failed, 124–127 when it could not run one), and the output size; with
 * `-n 1` over a file of TASKS lines it starts exactly TASKS commands.
 */
export async function runXargs(tasks: number, command: ShellCommand, options: BaselineOptions): Promise<Measure> {
  const { dir, ids } = idsFolder(options.scratch, 'xargs', tasks);
  const output = join(dir, 'output.txt');
  const measure = await timed(xargsArgs(command, options.concurrency, ids), {
    cwd: dir,
    scratch: options.scratch,
    rssMethod: options.rssMethod,
    stdoutFile: output,
  });
  if (measure.status !== 0) fail(`xargs exited with ${measure.status}:\n${measure.stderr.slice(-3000)}`);
  checkOutputBytes('xargs', output, tasks, command);
  rmSync(dir, { recursive: true, force: true });
  return measure;
}

export interface RawLoopRun {
  measure: Measure;
  /** The loop's own time, from creating the pool to the last reply (node start-up and the pool's shutdown apart). */
  loopMs: number;
}

/**
 * The raw piscina loop (raw-piscina/loop.mjs): TASKS calls of the module in WAVES awaited
 * waves, on THREADS threads, at most `concurrency` in flight, one message per task.
 * Checked: exit 0 and every reply counted (the loop itself checks each one).
 */
export async function runRawLoop(modulePath: string, tasks: number, waves: number, threads: number, options: BaselineOptions): Promise<RawLoopRun> {
  const args = [process.execPath, kRawLoop, modulePath, String(tasks), String(waves), String(threads), String(options.concurrency)];
  const measure = await timed(args, { cwd: options.scratch, scratch: options.scratch, rssMethod: options.rssMethod });
  if (measure.status !== 0) fail(`the raw piscina loop exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  let figures: { tasks?: unknown; loopMs?: unknown };
  try {
    figures = JSON.parse(measure.stdout) as typeof figures;
  } catch {
    fail(`the raw piscina loop printed something that is not JSON:\n${measure.stdout.slice(0, 2000)}`);
  }
  if (figures.tasks !== tasks || typeof figures.loopMs !== 'number') {
    fail(`the raw piscina loop says ${String(figures.tasks)} replies, expected ${tasks}: ${measure.stdout.slice(0, 500)}`);
  }
  return { measure, loopMs: figures.loopMs };
}
