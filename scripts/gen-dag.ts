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
 * field double-quoted, `\n` line ends, as csv-wave itself writes the file.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export interface DagOptions {
  /** Number of tasks (rows). */
  tasks: number;
  /** Mean number of dependencies per task (tasks near the start have fewer: only earlier tasks qualify). */
  meanDeps: number;
  /** PRNG seed; equal options give equal files. */
  seed: number;
}

/** The seed columns of DESIGN.md section 2, in order. */
export const kSeedColumns = [
  'id',
  'title',
  'description',
  'role',
  'angle',
  'gc_round',
  'deps',
  'context_from',
  'exec_mode',
  'wave',
  'status',
  'findings',
  'gc_signal',
  'severity_summary',
  'error',
] as const;

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

export function taskId(index: number): string {
  return `T${String(index + 1).padStart(6, '0')}`;
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
  if (tasks > 999_999) throw new RangeError('tasks must be at most 999,999 (ids have six digits)');
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
    const id = taskId(index);
    // A comma in every description and a quote in some exercise the CSV quoting.
    const quote = random() < 0.1 ? ' ("synthetic")' : '';
    const description = `${pick(random, kVerbs)} ${pick(random, kObjects)} for ${id}, then report${quote}.`;

    const record: Record<(typeof kSeedColumns)[number], string> = {
      id,
      title: `Task ${index + 1}`,
      description,
      role: 'worker',
      angle: [...angles].join(';'),
      gc_round: '0',
      deps: deps.map(taskId).join(';'),
      context_from: contextFrom.map(taskId).join(';'),
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
