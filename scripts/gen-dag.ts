/**
 * Generates a random, acyclic tasks.csv for benchmarks and tests.
 *
 *   npx tsx scripts/gen-dag.ts --tasks N [--mean-deps D] [--seed S] --out DIR
 *
 * writes DIR/tasks.csv and DIR/session.json ({"pipeline":"generic"}). The same options
 * always give the same bytes (seeded mulberry32 PRNG).
 *
 * Shape of the graph: task i (ids T000001, T000002, …) depends only on tasks before it, so
 * the graph is acyclic; its number of deps is Poisson-distributed around meanDeps (capped by
 * the number of earlier tasks) and the deps are drawn uniformly from all earlier tasks.
 * context_from is a random subset of deps (each dep kept with probability 1/2, in deps
 * order), so it always points at earlier waves. Every row is a pending csv-wave task of
 * role "worker" with an empty wave cell, in the seed's layout: header unquoted, every data
 * field double-quoted, `\n` line ends, as csv-wave itself writes the file. Ids get a seventh
 * digit from 1,000,000 tasks on. generateLayeredDag makes the layered graphs (one wave per
 * layer, extra columns such as a task's duration) of the benchmarks in scripts/bench/.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { kTaskColumns } from '../src/core/task.js';

export interface DagOptions {
  /** Number of tasks (rows). */
  tasks: number;
  /** Mean number of dependencies per task (tasks near the start have fewer: only earlier tasks qualify). */
  meanDeps: number;
  /** PRNG seed; equal options give equal files. */
  seed: number;
}

/** The seed columns of DESIGN.md section 2, in order. */
export const kSeedColumns = kTaskColumns;

const kAngles = ['Technical', 'Product', 'Risk', 'Innovation', 'Cost'] as const;
const kVerbs = ['Review', 'Summarise', 'Compare', 'Critique', 'Extend', 'Test', 'Rank'] as const;
const kObjects = ['the design notes', 'upstream findings', 'the API surface', 'open risks', 'user feedback'] as const;

/** mulberry32: a small, fast, seedable PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Poisson-distributed count with the given mean (Knuth's method; normal approximation for large means). */
function poisson(random: () => number, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) {
    const u = Math.max(random(), Number.MIN_VALUE);
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal));
  }
  const limit = Math.exp(-mean);
  let count = 0;
  let product = random();
  while (product > limit) {
    count++;
    product *= random();
  }
  return count;
}

/** `T000001` for index 0; ids get a seventh digit only from the millionth task on. */
export function taskId(index: number, width = 6): string {
  return `T${String(index + 1).padStart(width, '0')}`;
}

/** Digits of the ids of a file of `tasks` rows: 6, or more for a million rows and up. */
export function idWidth(tasks: number): number {
  return Math.max(6, String(tasks).length);
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A CSV data field: always double-quoted, inner quotes doubled. */
function quoted(cell: string): string {
  return `"${cell.replaceAll('"', '""')}"`;
}

/** The tasks.csv text of a random DAG (see the file comment for its shape). */
export function generateDag({ tasks, meanDeps, seed }: DagOptions): string {
  if (!Number.isInteger(tasks) || tasks < 0) throw new RangeError(`tasks must be a non-negative integer, not ${tasks}`);
  if (!(meanDeps >= 0) || !Number.isFinite(meanDeps)) throw new RangeError(`meanDeps must be >= 0, not ${meanDeps}`);
  if (tasks > 9_999_999) throw new RangeError('tasks must be at most 9,999,999 (ids have at most seven digits)');
  const width = idWidth(tasks);
  const id = (index: number) => taskId(index, width);
  const random = mulberry32(seed);
  const lines: string[] = [kSeedColumns.join(',')];
  const chosen = new Set<number>();
  for (let index = 0; index < tasks; index++) {
    const count = Math.min(poisson(random, meanDeps), index);
    chosen.clear();
    if (count === index) for (let earlier = 0; earlier < index; earlier++) chosen.add(earlier);
    else while (chosen.size < count) chosen.add(Math.floor(random() * index));
    const deps = [...chosen].sort((a, b) => a - b);
    const contextFrom = deps.filter(() => random() < 0.5);

    const angleCount = 1 + Math.floor(random() * 2);
    const angles = new Set<string>();
    while (angles.size < angleCount) angles.add(pick(random, kAngles));
    const ownId = id(index);
    // A comma in every description and a quote in some exercise the CSV quoting.
    const quote = random() < 0.1 ? ' ("synthetic")' : '';
    const description = `${pick(random, kVerbs)} ${pick(random, kObjects)} for ${ownId}, then report${quote}.`;

    const record: Record<(typeof kSeedColumns)[number], string> = {
      id: ownId,
      title: `Task ${index + 1}`,
      description,
      role: 'worker',
      angle: [...angles].join(';'),
      gc_round: '0',
      deps: deps.map(id).join(';'),
      context_from: contextFrom.map(id).join(';'),
      exec_mode: 'csv-wave',
      wave: '',
      status: 'pending',
      findings: '',
      gc_signal: '',
      severity_summary: '',
      error: '',
    };
    lines.push(kSeedColumns.map((column) => quoted(record[column])).join(','));
  }
  return `${lines.join('\n')}\n`;
}

export interface LayeredDagOptions {
  /** Number of tasks (rows). */
  tasks: number;
  /** Layers of (nearly) equal size; task i is in layer floor(i * layers / tasks), which is its wave. */
  layers: number;
  /** Each task past the first layer depends on between minDeps and maxDeps tasks (uniform) of the layer before. */
  minDeps: number;
  maxDeps: number;
  seed: number;
  /** Extra columns, one cell per task, appended after the seed columns (e.g. `ms` for a module to read). */
  extraColumns?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The tasks.csv text of a layered DAG: the tasks of layer k depend only on tasks of layer
 * k-1 (at least one each), so layer k is wave k+1. context_from is empty, and the cells
 * are laid out as in generateDag. With one layer: independent tasks.
 */
export function generateLayeredDag({ tasks, layers, minDeps, maxDeps, seed, extraColumns = {} }: LayeredDagOptions): string {
  if (!Number.isInteger(tasks) || tasks < 0 || tasks > 9_999_999) throw new RangeError(`tasks must be an integer in 0..9,999,999, not ${tasks}`);
  if (!Number.isInteger(layers) || layers < 1 || (tasks > 0 && layers > tasks)) throw new RangeError(`layers must be in 1..tasks, not ${layers}`);
  if (!Number.isInteger(minDeps) || minDeps < 1 || !Number.isInteger(maxDeps) || maxDeps < minDeps) {
    throw new RangeError(`need 1 <= minDeps <= maxDeps, not ${minDeps}..${maxDeps}`);
  }
  const extraNames = Object.keys(extraColumns);
  for (const name of extraNames) {
    if (extraColumns[name]!.length !== tasks) throw new RangeError(`extra column ${name} has ${extraColumns[name]!.length} cells, not ${tasks}`);
  }
  const width = idWidth(tasks);
  const random = mulberry32(seed);
  const layerStart = (layer: number) => Math.ceil((layer * tasks) / layers);
  const lines: string[] = [[...kSeedColumns, ...extraNames].join(',')];
  const chosen = new Set<number>();
  let layer = 0;
  for (let index = 0; index < tasks; index++) {
    while (index >= layerStart(layer + 1)) layer++;
    chosen.clear();
    if (layer > 0) {
      const from = layerStart(layer - 1);
      const size = layerStart(layer) - from;
      const count = Math.min(size, minDeps + Math.floor(random() * (maxDeps - minDeps + 1)));
      while (chosen.size < count) chosen.add(from + Math.floor(random() * size));
    }
    const id = taskId(index, width);
    const cells = [
      id,
      `Task ${index + 1}`,
      `${pick(random, kVerbs)} ${pick(random, kObjects)} for ${id}, then report.`,
      'worker',
      pick(random, kAngles),
      '0',
      [...chosen].sort((a, b) => a - b).map((dep) => taskId(dep, width)).join(';'),
      '',
      'csv-wave',
      '',
      'pending',
      '',
      '',
      '',
      '',
      ...extraNames.map((name) => extraColumns[name]![index]!),
    ];
    lines.push(cells.map(quoted).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Writes DIR/tasks.csv and DIR/session.json (generic pipeline: any role is accepted). */
export function writeDagSession(dir: string, options: DagOptions): { tasksPath: string; bytes: number } {
  mkdirSync(dir, { recursive: true });
  const text = generateDag(options);
  const tasksPath = join(dir, 'tasks.csv');
  writeFileSync(tasksPath, text);
  writeFileSync(join(dir, 'session.json'), `${JSON.stringify({ pipeline: 'generic' })}\n`);
  return { tasksPath, bytes: Buffer.byteLength(text) };
}

function cli(argv: string[]): number {
  const usage = 'usage: npx tsx scripts/gen-dag.ts --tasks N [--mean-deps D] [--seed S] --out DIR';
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tasks: { type: 'string' },
        'mean-deps': { type: 'string', default: '3' },
        seed: { type: 'string', default: '1' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const tasks = Number(values.tasks);
  const meanDeps = Number(values['mean-deps']);
  const seed = Number(values.seed);
  if (values.tasks === undefined || !Number.isInteger(tasks) || tasks < 0 || values.out === undefined) {
    process.stderr.write(`--tasks (a non-negative integer) and --out are required\n${usage}\n`);
    return 2;
  }
  if (!Number.isFinite(meanDeps) || meanDeps < 0 || !Number.isInteger(seed)) {
    process.stderr.write(`--mean-deps must be a number >= 0 and --seed an integer\n${usage}\n`);
    return 2;
  }
  try {
    const { tasksPath, bytes } = writeDagSession(resolve(values.out), { tasks, meanDeps, seed });
    process.stdout.write(`wrote ${tasksPath} (${tasks} tasks, ${bytes} bytes) and session.json\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
}

function isMain(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) process.exitCode = cli(process.argv.slice(2));
