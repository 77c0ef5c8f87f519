/**
 * The result cache's benchmarks (issue 25):
 *
 *   - stale: a 1,000-task session (10 layers, each task reading the findings of 1 to 3 tasks
 *     of the layer before) run once, then one row of layer 5 edited. `rerun --stale` must
 *     execute exactly the edited task and its dependents (its findings changed, so their
 *     prev_context did; their own findings do not change, so everything below them comes
 *     from the cache), counted through the log each command appends to, or the requests the
 *     fake model server got. Its wall time is compared with a session of those tasks alone
 *     (`run --no-cache`), interleaved ABBA; the goal is at most 1.1×. Twice: with command
 *     tasks, and with model tasks against a loopback OpenAI-compatible server written here.
 *   - overhead: a first run of 10,000 no-op module tasks in 10 waves (concurrency 64), the
 *     cache on (every entry written) against `--no-cache`, interleaved ABBA; the goal is at
 *     most 5% more wall time. `--no-cache` still computes and records every key (status
 *     tells stale tasks by them), so this is the cost of the entries and the look-ups.
 *
 * `--write` (the default without --quick) writes the `cache` section of BENCHMARKS.md.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLayeredDag } from '../gen-dag.js';
import {
  checkRun,
  detectRssMethod,
  ensureBuilt,
  fail,
  fixed,
  goalTable,
  isMain,
  loadAverage,
  machineLines,
  median,
  publish,
  readTasksCsv,
  runMain,
  timed,
  writeSession,
  type Measure,
  type RssMethod,
} from './lib.js';

const kUsage = 'npx tsx scripts/bench/cache.ts [--quick] [--rounds N] [--only stale,overhead] [--dir PATH] [--write | --no-write] [--no-build] [--keep]';
const kNoopModule = "export default async () => ({findings: ''});\n";
const kStaleTasks = 1000;
const kLayers = 10;
/** The layer whose first task with the most dependents is edited: mid-DAG. */
const kEditedLayer = 5;
/** A command whose findings are a digest of its own description: an edited row's findings change, its dependents' do not. */
const kCommand = 'echo "$CSV_WAVE_TASK_ID" >> runs.log; printf %s {description} | sha256sum | cut -c1-16';

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

interface Options {
  quick: boolean;
  rounds: number;
  only: Set<string>;
  write: boolean;
  build: boolean;
  keep: boolean;
  dir: string;
}

// ---------------------------------------------------------------------------------------
// The fake model server: answers each chat completion with a digest of the task's description.

interface FakeModel {
  baseUrl: string;
  /** The task of each request, in the order they came. */
  requests: string[];
  close: () => Promise<void>;
}

async function startFakeModel(): Promise<FakeModel> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const parsed = JSON.parse(body || '{}') as { messages?: { role: string; content: string }[]; model?: string };
      const prompt = parsed.messages?.find((message) => message.role === 'user')?.content ?? '';
      const id = /^Task: *(\S+)/m.exec(prompt)?.[1] ?? '?';
      const description = /## Your task\n([\s\S]*?)\n\n## /.exec(prompt)?.[1] ?? '';
      requests.push(id);
      const content = JSON.stringify({ id, status: 'completed', verification: 'self-validated', findings: `Did ${id}: ${hash(description)}` });
      const text = JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: parsed.model ?? 'fake',
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: Math.ceil(prompt.length / 4), completion_tokens: 30, total_tokens: Math.ceil(prompt.length / 4) + 30 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

// ---------------------------------------------------------------------------------------
// stale: rerun --stale after one edited row, against the tasks it must run, alone.

interface StaleRow {
  id: string;
  description: string;
  deps: string[];
}

/** 1,000 tasks in 10 layers, each depending on (and reading) 1 to 3 tasks of the layer before. */
function staleRows(): StaleRow[] {
  const csv = generateLayeredDag({ tasks: kStaleTasks, layers: kLayers, minDeps: 1, maxDeps: 3, seed: 11 });
  const [header, ...lines] = csv.trim().split('\n');
  const columns = header!.split(',');
  // Every cell of gen-dag's rows is quoted, and none holds a quote.
  return lines.map((line) => {
    const cells = [...line.matchAll(/"([^"]*)"/g)].map((match) => match[1]!);
    const id = cells[columns.indexOf('id')]!;
    const deps = cells[columns.indexOf('deps')]!;
    return { id, description: `task ${id}`, deps: deps === '' ? [] : deps.split(';') };
  });
}

function tasksCsv(rows: readonly StaleRow[]): string {
  return `id,description,deps,context_from\n${rows.map((row) => `${row.id},${row.description},${row.deps.join(';')},${row.deps.join(';')}`).join('\n')}\n`;
}

/**
 * The run exited 0 and tasks.csv holds every task completed. (lib.ts's checkRun also holds
 * the summary to the whole session, which a rerun's is not, and expects no discovery file,
 * which a model task writes.)
 */
async function checkCompleted(measure: Measure, dir: string, tasks: number, what: string): Promise<void> {
  if (measure.status !== 0) fail(`${what} exited with ${measure.status ?? measure.signal}:\n${measure.stderr.slice(-3000)}`);
  const { byStatus } = await readTasksCsv(join(dir, 'tasks.csv'));
  if (byStatus.get('completed') !== tasks) fail(`${what} left ${byStatus.get('completed') ?? 0} of ${tasks} tasks completed`);
}

interface StaleCase {
  kind: 'command' | 'model';
  args: string[];
  /** Executions so far: runs.log's lines (command) or the server's requests (model). */
  executions: (dir: string) => string[];
}

interface StaleFigures {
  kind: StaleCase['kind'];
  edited: string;
  expected: string[];
  stale: Measure[];
  alone: Measure[];
}

async function staleBenchmark(scratch: string, rssMethod: RssMethod, rounds: number, model: FakeModel): Promise<StaleFigures[]> {
  const rows = staleRows();
  const layerOf = new Map<string, number>();
  for (const row of rows) layerOf.set(row.id, row.deps.length === 0 ? 1 : 1 + Math.max(...row.deps.map((dep) => layerOf.get(dep)!)));
  const dependents = (id: string) => rows.filter((row) => row.deps.includes(id)).map((row) => row.id);
  const edited = rows.filter((row) => layerOf.get(row.id) === kEditedLayer).sort((a, b) => dependents(b.id).length - dependents(a.id).length)[0]!;
  // The edited task's findings change; its dependents read them (context_from), so their keys change;
  // their own findings do not, so every task below them keeps its key.
  const expected = [edited.id, ...dependents(edited.id)].sort();
  const aloneRows = rows.filter((row) => expected.includes(row.id)).map((row) => ({ ...row, deps: [] }));
  const cases: StaleCase[] = [
    { kind: 'command', args: ['--cmd', kCommand, '--concurrency', '4'], executions: (dir) => readFileSync(join(dir, 'runs.log'), 'utf8').split('\n').filter(Boolean) },
    { kind: 'model', args: ['--executor', 'openai', '--model', 'fake', '--base-url', model.baseUrl, '--concurrency', '8'], executions: () => [...model.requests] },
  ];
  const results: StaleFigures[] = [];
  for (const testCase of cases) {
    const base = writeSession(join(scratch, `stale-${testCase.kind}-base`), tasksCsv(rows));
    writeFileSync(join(base, 'runs.log'), '');
    const first = await timed({ node: ['run', base, ...testCase.args, '--json'] }, { cwd: scratch, scratch, rssMethod });
    await checkCompleted(first, base, rows.length, `the first run of the ${testCase.kind} session`);
    const figures: StaleFigures = { kind: testCase.kind, edited: edited.id, expected, stale: [], alone: [] };
    const runStale = async (round: number) => {
      const dir = join(scratch, `stale-${testCase.kind}-${round}`);
      cpSync(base, dir, { recursive: true });
      const path = join(dir, 'tasks.csv');
      const text = readFileSync(path, 'utf8');
      // The description cell, quoted or not; the ids are of one width, so no other cell holds it whole.
      const cell = new RegExp(`(?<=^|[,"])${edited.description}(?=[",])`, 'gm');
      if ((text.match(cell) ?? []).length !== 1) fail(`tasks.csv of ${dir} does not hold the cell \`${edited.description}\` once`);
      writeFileSync(path, text.replace(cell, `${edited.description} edited`));
      const before = testCase.executions(dir).length;
      const measure = await timed({ node: ['rerun', dir, '--stale', ...testCase.args, '--json'] }, { cwd: scratch, scratch, rssMethod });
      await checkCompleted(measure, dir, rows.length, `rerun --stale of the ${testCase.kind} session`);
      const ran = testCase.executions(dir).slice(before).sort();
      if (JSON.stringify(ran) !== JSON.stringify(expected)) fail(`rerun --stale of the ${testCase.kind} session executed ${ran.join(' ')}; expected ${expected.join(' ')}`);
      figures.stale.push(measure);
      rmSync(dir, { recursive: true, force: true });
    };
    const runAlone = async (round: number) => {
      const dir = writeSession(join(scratch, `alone-${testCase.kind}-${round}`), tasksCsv(aloneRows));
      writeFileSync(join(dir, 'runs.log'), '');
      const before = testCase.executions(dir).length;
      const measure = await timed({ node: ['run', dir, '--no-cache', ...testCase.args, '--json'] }, { cwd: scratch, scratch, rssMethod });
      await checkCompleted(measure, dir, aloneRows.length, `the ${testCase.kind} tasks alone`);
      if (testCase.executions(dir).length - before !== expected.length) fail(`the ${testCase.kind} tasks alone did not execute ${expected.length} task(s)`);
      figures.alone.push(measure);
      rmSync(dir, { recursive: true, force: true });
    };
    for (let round = 0; round < rounds; round++) {
      // ABBA: the order alternates each round, so a machine's drift weighs on both.
      const order = round % 2 === 0 ? [runStale, runAlone] : [runAlone, runStale];
      for (const step of order) await step(round);
      console.log(`stale ${testCase.kind} round ${round + 1}/${rounds}: rerun --stale ${fixed(figures.stale.at(-1)!.seconds)} s, alone ${fixed(figures.alone.at(-1)!.seconds)} s (load ${loadAverage()})`);
    }
    results.push(figures);
  }
  return results;
}

// ---------------------------------------------------------------------------------------
// overhead: a first run of no-op modules, the cache on against --no-cache.

interface OverheadFigures {
  tasks: number;
  off: Measure[];
  on: Measure[];
}

async function overheadBenchmark(scratch: string, rssMethod: RssMethod, rounds: number, tasks: number): Promise<OverheadFigures> {
  const csv = generateLayeredDag({ tasks, layers: 10, minDeps: 1, maxDeps: 1, seed: 7 });
  const module = join(scratch, 'noop.mjs');
  writeFileSync(module, kNoopModule);
  const figures: OverheadFigures = { tasks, off: [], on: [] };
  const once = async (mode: 'off' | 'on', round: number) => {
    const dir = writeSession(join(scratch, `overhead-${mode}-${round}`), csv);
    const flags = mode === 'off' ? ['--no-cache'] : [];
    const measure = await timed({ node: ['run', dir, '--module', module, '--concurrency', '64', ...flags, '--json'] }, { cwd: scratch, scratch, rssMethod });
    await checkRun(measure, dir, tasks, `the first run with the cache ${mode}`);
    figures[mode].push(measure);
    rmSync(dir, { recursive: true, force: true });
  };
  for (let round = 0; round < rounds; round++) {
    const order: ('off' | 'on')[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    for (const mode of order) await once(mode, round);
    console.log(`overhead round ${round + 1}/${rounds}: off ${fixed(figures.off.at(-1)!.seconds)} s / ${fixed(figures.off.at(-1)!.cpuSeconds)} s CPU, on ${fixed(figures.on.at(-1)!.seconds)} s / ${fixed(figures.on.at(-1)!.cpuSeconds)} s CPU (load ${loadAverage()})`);
  }
  return figures;
}

// ---------------------------------------------------------------------------------------
// The section

/** The median of the per-round ratios a/b. */
function ratio(a: readonly Measure[], b: readonly Measure[], pick: (measure: Measure) => number): number {
  return median(a.map((measure, round) => pick(measure) / pick(b[round]!)));
}

function section(stale: StaleFigures[], overhead: OverheadFigures | undefined, options: Options, loadAtStart: string, loadAtEnd: string): string {
  const loaded = Math.max(Number(loadAtStart), Number(loadAtEnd)) > 2;
  const lines = [
    '## Result cache: stale reruns and first-run overhead',
    '',
    'Issue 25\'s two goals, each a ratio of runs interleaved ABBA in one run of the script (`scripts/bench/cache.ts`): ' +
      'the median of the per-round ratios, wall time from here, CPU from GNU time (the process and its children).',
    '',
    ...machineLines('scripts/bench/cache.ts', 'bench:cache', loadAtStart, [`- Rounds: ${options.rounds}`]),
    ...(loaded ? ['- **Taken at a load average above 2: these figures do not count as met or missed; the lead re-runs them on a quiet machine.**'] : []),
    '',
  ];
  const goals: [string, string, boolean][] = [];
  if (stale.length > 0) {
    lines.push(
      `**stale**: ${kStaleTasks.toLocaleString('en-US')} tasks in ${kLayers} layers, each reading the findings of 1 to 3 tasks of the layer before; ` +
        `one row of layer ${kEditedLayer} edited (its description). \`rerun --stale\` against a session of the tasks it must run alone (\`run --no-cache\`).`,
      '',
      '| tasks | edited | executed (checked: exactly these) | rerun --stale wall s | alone wall s | wall stale/alone | rerun --stale CPU s | alone CPU s |',
      '|---|---|---|---:|---:|---:|---:|---:|',
    );
    for (const figures of stale) {
      const wall = ratio(figures.stale, figures.alone, (m) => m.seconds);
      lines.push(
        `| ${figures.kind} | ${figures.edited} | ${figures.expected.length}: ${figures.expected.join(' ')} | ${fixed(median(figures.stale.map((m) => m.seconds)))} | ${fixed(median(figures.alone.map((m) => m.seconds)))} ` +
          `| ${fixed(wall)} | ${fixed(median(figures.stale.map((m) => m.cpuSeconds)))} | ${fixed(median(figures.alone.map((m) => m.cpuSeconds)))} |`,
      );
      goals.push([`rerun --stale (${figures.kind} tasks) takes ≤ 1.1× the time of its tasks alone`, `${fixed(wall)}×`, wall <= 1.1]);
    }
    lines.push('');
  }
  if (overhead !== undefined) {
    const wall = ratio(overhead.on, overhead.off, (m) => m.seconds);
    const cpu = ratio(overhead.on, overhead.off, (m) => m.cpuSeconds);
    lines.push(
      `**overhead**: a first run of ${overhead.tasks.toLocaleString('en-US')} no-op module tasks in 10 waves, concurrency 64, the cache on (every entry written) against \`--no-cache\`. ` +
        '`--no-cache` still computes and records each key (status finds stale tasks by them): this is the cost of writing the entries and looking up.',
      '',
      '| round | off wall s | on wall s | wall on/off | off CPU s | on CPU s | CPU on/off |',
      '|---:|---:|---:|---:|---:|---:|---:|',
    );
    overhead.on.forEach((on, round) => {
      const off = overhead.off[round]!;
      lines.push(`| ${round + 1} | ${fixed(off.seconds)} | ${fixed(on.seconds)} | ${fixed(on.seconds / off.seconds)} | ${fixed(off.cpuSeconds)} | ${fixed(on.cpuSeconds)} | ${fixed(on.cpuSeconds / off.cpuSeconds)} |`);
    });
    lines.push('');
    goals.push([`a first run of ${overhead.tasks.toLocaleString('en-US')} no-op module tasks: the cache costs ≤ 5% of the wall time`, `${fixed(wall)}× wall, ${fixed(cpu)}× CPU`, wall <= 1.05]);
  }
  const table = goalTable(goals);
  // At a load average above 2, a figure is neither met nor missed.
  lines.push(...(loaded ? table.map((line) => line.replace(/\*\*(yes|no)\*\*/, '$1 (loaded: not counted)')) : table));
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      only: { type: 'string' },
      dir: { type: 'string' },
      write: { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  });
  const quick = values.quick ?? false;
  const rounds = values.rounds === undefined ? (quick ? 2 : 6) : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) fail('--rounds must be a positive integer');
  const only = new Set((values.only ?? 'stale,overhead').split(','));
  for (const name of only) if (name !== 'stale' && name !== 'overhead') fail(`--only takes stale and overhead, got ${name}`);
  const options: Options = {
    quick,
    rounds,
    only,
    write: (values.write ?? false) || (!values['no-write'] && !quick),
    build: !values['no-build'],
    keep: values.keep ?? false,
    dir: values.dir ?? process.env['TMPDIR'] ?? '/tmp',
  };
  ensureBuilt(options.build);
  mkdirSync(options.dir, { recursive: true });
  const scratch = mkdtempSync(join(options.dir, 'csv-wave-bench-cache-'));
  const rssMethod = detectRssMethod(scratch);
  const loadAtStart = loadAverage();
  const model = await startFakeModel();
  try {
    const stale = only.has('stale') ? await staleBenchmark(scratch, rssMethod, rounds, model) : [];
    const overhead = only.has('overhead') ? await overheadBenchmark(scratch, rssMethod, rounds, quick ? 2000 : 10_000) : undefined;
    publish('cache', section(stale, overhead, options, loadAtStart, loadAverage()), options);
  } finally {
    await model.close();
    if (!options.keep) rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) runMain('cache', kUsage, main);
