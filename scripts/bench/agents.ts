/**
 * csv-wave's own cost per agent task (issue 24, Benchmarks): N tasks through
 * `csv-wave run --executor codex` against the same N prompts through `codex exec` run
 * directly by a small pool (the same arguments, codexExecArgs; the same concurrency), both
 * on one scripted Responses-API server on loopback (test/helpers/agent-servers), the real
 * codex binary of the devDependency. Rounds alternate the order (csv-wave first, then
 * direct first: ABBA), so a shared machine's drift cancels.
 *
 * What is measured, and how:
 *   - wall: from spawning the side's process to its exit, seen from here (csv-wave's start-up,
 *     its check of `codex --version`, its files and report included).
 *   - CPU of a side's whole tree: bash's `time` (TIMEFORMAT %3U %3S: user and system to the
 *     millisecond) of its process, which counts the process and every descendant it waited
 *     for (each codex exec, and what codex waited for).
 *   - CPU of the codex processes: `codex` on PATH is a bash wrapper that runs the real codex
 *     under bash's `time` and appends its user and system CPU to FILE, one line per process;
 *     csv-wave's `codex --version` check is a line of its own, counted as csv-wave's (it is
 *     csv-wave's cost). Not GNU time: its %U and %S cut each figure down to 10 ms, which
 *     left about 10 ms of every codex process (5 ms each of user and system, on average)
 *     out of the codex lines and so in the side's own CPU, on both sides alike.
 *   - csv-wave's own CPU = the tree's CPU - the codex execs' CPU: the engine's main process
 *     (all its threads) and anything else it started. The `time` wrapper's own cost (about
 *     a millisecond a task) falls on csv-wave's side, against it. The main process alone
 *     (process.resourceUsage() on exit, RUSAGE_SELF) is shown too, as a check.
 *   - The direct side's own CPU (the pool, a node process) is shown the same way: what any
 *     harness costs at the least.
 * Overhead = (csv-wave's wall - direct wall) / direct wall, per round, the median of rounds.
 * The pool starts codex as csv-wave does, `detached` (setsid): with autogroup scheduling
 * (/proc/sys/kernel/sched_autogroup_enabled) each session is one scheduling group, so codex
 * processes left in the pool's session shared one CPU share on a loaded machine while
 * csv-wave's had one each, which made csv-wave look 35% faster at concurrency 8.
 *
 *   npx tsx scripts/bench/agents.ts [--tasks 24] [--rounds 6] [--concurrency 1,8] [--answer-ms 0] [--quick] [--write | --no-write] [--no-build] [--keep]
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { codexExecArgs } from '../../src/executors/agents/codex/args.js';
import { answerSchema } from '../../src/executors/openai/contract-schema.js';
import { codexBinary, codexHome, removeTempDirs } from '../../test/helpers/agent-servers/agent-cli.js';
import { startResponsesServer, type ResponsesServer } from '../../test/helpers/agent-servers/responses-server.js';
import { tasksCsv } from '../../test/helpers/session-builder.js';
import { ensureBuilt, fail, fixed, isMain, kBin, loadAverage, machineLines, median, publish, runMain } from './lib.js';

/** Above this load average (on the shared 2-core box) the goals' figures are marked as noisy. */
const kQuietLoad = 2;

/** bash's `time` prints user and system CPU to the millisecond (GNU time's %U and %S are cut to 10 ms). */
const kCpuFormat = '%3U %3S';
const kModel = 'bench-model';
const kKey = 'sk-bench-agents-0123456789abcdef';

interface Side {
  wallSeconds: number;
  /** User + system seconds of the side's process and all it waited for (bash's `time`). */
  treeCpuSeconds: number;
  /** The codex exec processes' CPU seconds, each from its own wrapper line. */
  codexCpuSeconds: number;
  /** csv-wave's `codex --version` check (0 for the direct side). */
  versionCpuSeconds: number;
  /** RUSAGE_SELF of the side's main node process. */
  mainCpuSeconds: number;
  execs: number;
}

interface Round {
  csvWave: Side;
  direct: Side;
}

/**
 * A `codex` that records the CPU of the real one in `cpuFile`, one line per process:
 * `<user> <system> version|exec`. codex's stderr goes where the wrapper's went.
 */
function codexWrapper(dir: string, cpuFile: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'codex');
  writeFileSync(
    path,
    [
      '#!/bin/bash',
      `case "$1" in --version) TIMEFORMAT='${kCpuFormat} version' ;; *) TIMEFORMAT='${kCpuFormat} exec' ;; esac`,
      `{ time ${JSON.stringify(codexBinary())} "$@" 2>&3 ; } 3>&2 2>>${JSON.stringify(cpuFile)}`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return dir;
}

function readCodexCpu(cpuFile: string): { exec: number; version: number; execs: number } {
  let exec = 0;
  let version = 0;
  let execs = 0;
  if (!existsSync(cpuFile)) return { exec, version, execs };
  for (const line of readFileSync(cpuFile, 'utf8').split('\n')) {
    const match = /^([\d.]+) ([\d.]+) (.*)$/.exec(line.trim());
    if (!match) continue;
    const seconds = Number(match[1]) + Number(match[2]);
    if (match[3] === 'version') version += seconds;
    else {
      exec += seconds;
      execs++;
    }
  }
  return { exec, version, execs };
}

/** The node wrapper that writes RUSAGE_SELF of its process on exit, then runs `target` (bin.js, or the pool). */
function selfUsageWrapper(scratch: string, name: string, target: string, selfFile: string): string {
  const path = join(scratch, `${name}.mjs`);
  writeFileSync(
    path,
    [
      `import { writeFileSync } from 'node:fs';`,
      `process.on('exit', () => { const u = process.resourceUsage(); writeFileSync(${JSON.stringify(selfFile)}, String((u.userCPUTime + u.systemCPUTime) / 1e6)); });`,
      `await import(${JSON.stringify(pathToFileURL(target).href)});`,
    ].join('\n'),
  );
  return path;
}

/**
 * The direct side: runs each job's `codex exec` (its arguments, its prompt on stdin) with
 * `concurrency` at once, reading all of stdout as csv-wave does, and exits 1 if one failed.
 */
const kPoolSource = `
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
const { jobs, concurrency } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let next = 0;
let failed = 0;
async function lane() {
  while (next < jobs.length) {
    const job = jobs[next++];
    await new Promise((resolve) => {
      // detached, as csv-wave starts codex (task-process.ts): a session of its own, and so, with the kernel's
      // autogroup scheduling, a CPU share of its own against the machine's other sessions, as under csv-wave.
      const child = spawn('codex', job.args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: job.cwd, detached: true });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk) => { out += chunk; });
      child.stderr.resume();
      child.stdin.end(job.prompt);
      child.on('close', (code) => { if (code !== 0 || !out.includes('turn.completed')) failed++; resolve(); });
    });
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
if (failed > 0) { console.error(failed + ' codex exec failed'); process.exitCode = 1; }
`;

/** Runs `args` under bash's `time` with `env`; the tree's CPU from its figures. */
function timedTree(args: string[], env: NodeJS.ProcessEnv, cwd: string, figures: string): Promise<{ wallSeconds: number; treeCpuSeconds: number; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // $0 is the figures file; the command's stderr goes to the pipe (fd 3), time's line to the file.
    const script = `TIMEFORMAT='${kCpuFormat}'; { time "$@" 2>&3 ; } 3>&2 2>"$0"`;
    const child = spawn('bash', ['-c', script, figures, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallSeconds = (performance.now() - started) / 1000;
      const lines = readFileSync(figures, 'utf8').trim().split('\n');
      const [user, system] = (lines[lines.length - 1] ?? '').split(' ').map(Number);
      resolve({ wallSeconds, treeCpuSeconds: (user ?? Number.NaN) + (system ?? Number.NaN), code, stderr });
    });
  });
}

interface Setup {
  scratch: string;
  server: ResponsesServer;
  /** Tasks per run (one for the fixed-cost runs). */
  tasks: number;
  /** The env both sides run with: the wrapper first on PATH, a private CODEX_HOME naming no provider, the key. */
  env: (wrapperDir: string) => NodeJS.ProcessEnv;
}

let runCounter = 0;

function newSession(setup: Setup): string {
  const dir = join(setup.scratch, `session-${++runCounter}`);
  mkdirSync(dir, { recursive: true });
  const rows = Array.from({ length: setup.tasks }, (_, index) => ({ id: `T${String(index + 1).padStart(3, '0')}`, description: `Write part ${index + 1} of the report`, role: 'writer' }));
  writeFileSync(join(dir, 'tasks.csv'), tasksCsv(rows));
  writeFileSync(join(dir, 'session.json'), JSON.stringify({ pipeline: 'generic' }));
  return dir;
}

async function runCsvWave(setup: Setup, concurrency: number): Promise<Side & { prompts: string[]; dir: string }> {
  const dir = newSession(setup);
  const cpuFile = join(setup.scratch, `codex-cpu-${runCounter}.txt`);
  const selfFile = join(setup.scratch, `self-${runCounter}.txt`);
  const wrapper = codexWrapper(join(setup.scratch, `bin-${runCounter}`), cpuFile);
  const entry = selfUsageWrapper(setup.scratch, `csv-wave-${runCounter}`, kBin, selfFile);
  const before = setup.server.responseBodies().length;
  const ran = await timedTree(
    [process.execPath, entry, 'run', dir, '--executor', 'codex', '--model', kModel, '--base-url', setup.server.baseUrl, '--concurrency', String(concurrency), '--retries', '0'],
    setup.env(wrapper),
    dir,
    join(setup.scratch, `tree-${runCounter}.txt`),
  );
  if (ran.code !== 0) fail(`csv-wave run exited with ${ran.code}: ${ran.stderr}`);
  const codex = readCodexCpu(cpuFile);
  if (codex.execs !== setup.tasks) fail(`csv-wave ran codex ${codex.execs} times for ${setup.tasks} tasks`);
  const prompts = setup.server.responseBodies().slice(before).map((body) => promptOf(body.input));
  return {
    wallSeconds: ran.wallSeconds,
    treeCpuSeconds: ran.treeCpuSeconds,
    codexCpuSeconds: codex.exec,
    versionCpuSeconds: codex.version,
    mainCpuSeconds: Number(readFileSync(selfFile, 'utf8')),
    execs: codex.execs,
    prompts,
    dir,
  };
}

/** The text codex sent as the user's message: the prompt it read on stdin. */
function promptOf(input: Array<{ role?: string; content?: Array<{ text?: string }> }> | undefined): string {
  const user = (input ?? []).filter((item) => item.role === 'user');
  return user[user.length - 1]?.content?.map((part) => part.text ?? '').join('') ?? '';
}

async function runDirect(setup: Setup, concurrency: number, prompts: readonly string[]): Promise<Side> {
  const dir = newSession(setup);
  const cpuFile = join(setup.scratch, `codex-cpu-${runCounter}.txt`);
  const selfFile = join(setup.scratch, `self-${runCounter}.txt`);
  const wrapper = codexWrapper(join(setup.scratch, `bin-${runCounter}`), cpuFile);
  const schemaFile = join(dir, 'answer-schema.json');
  writeFileSync(schemaFile, JSON.stringify(answerSchema('generic', 'writer')));
  const jobs = prompts.map((prompt, index) => ({
    cwd: dir,
    prompt,
    args: codexExecArgs({
      model: kModel,
      baseUrl: setup.server.baseUrl,
      sandbox: 'read-only',
      workdir: dir,
      schemaFile,
      lastMessageFile: join(dir, `last-${index}.txt`),
      hasKey: true,
    }),
  }));
  const jobsFile = join(setup.scratch, `jobs-${runCounter}.json`);
  writeFileSync(jobsFile, JSON.stringify({ jobs, concurrency }));
  const pool = join(setup.scratch, 'pool.mjs');
  if (!existsSync(pool)) writeFileSync(pool, kPoolSource);
  const entry = selfUsageWrapper(setup.scratch, `direct-${runCounter}`, pool, selfFile);
  const ran = await timedTree([process.execPath, entry, jobsFile], setup.env(wrapper), dir, join(setup.scratch, `tree-${runCounter}.txt`));
  if (ran.code !== 0) fail(`the direct pool exited with ${ran.code}: ${ran.stderr}`);
  const codex = readCodexCpu(cpuFile);
  if (codex.execs !== prompts.length) fail(`the pool ran codex ${codex.execs} times for ${prompts.length} prompts`);
  return {
    wallSeconds: ran.wallSeconds,
    treeCpuSeconds: ran.treeCpuSeconds,
    codexCpuSeconds: codex.exec,
    versionCpuSeconds: 0,
    mainCpuSeconds: Number(readFileSync(selfFile, 'utf8')),
    execs: codex.execs,
  };
}

function readAutogroup(): string {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1' ? 'on' : 'off';
  } catch {
    return 'unknown';
  }
}

/** csv-wave's own CPU of a run: its tree's, but for the codex execs'. */
const ownCpu = (side: Side) => side.treeCpuSeconds - side.codexCpuSeconds;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string' },
      rounds: { type: 'string' },
      concurrency: { type: 'string', default: '1,8' },
      quick: { type: 'boolean', default: false },
      write: { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'answer-ms': { type: 'string', default: '0' },
    },
  });
  // How long the scripted server takes over each answer: 0 measures csv-wave against codex's
  // own start-up alone; a model's seconds show the overhead as a user of a real model meets it.
  const answerMs = Number(values['answer-ms']);
  if (!Number.isInteger(answerMs) || answerMs < 0) fail('--answer-ms must be a whole number of milliseconds');
  const quick = values.quick ?? false;
  const tasks = Number(values.tasks ?? (quick ? 8 : 24));
  const rounds = Number(values.rounds ?? (quick ? 2 : 6));
  const concurrencies = (values.concurrency ?? '1,8').split(',').map(Number);
  if (!Number.isInteger(tasks) || tasks < 1) fail('--tasks must be a positive integer');
  if (!Number.isInteger(rounds) || rounds < 1) fail('--rounds must be a positive integer');
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1)) fail('--concurrency must list positive integers');
  const write = (values.write ?? false) || (!values['no-write'] && !quick);
  ensureBuilt(!values['no-build']);
  const loadAtStart = loadAverage();
  const uptimeBefore = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();

  const scratch = mkdtempSync(join(process.env['TMPDIR'] ?? '/tmp', 'csv-wave-bench-agents-'));
  const answer = JSON.stringify({ status: 'completed', findings: 'part written', key_findings: ['part written'] });
  const server = await startResponsesServer(async () => {
    if (answerMs > 0) await new Promise((resolve) => setTimeout(resolve, answerMs));
    return { kind: 'text', text: answer, usage: { input_tokens: 900, cached_input_tokens: 0, output_tokens: 40 } };
  });
  const home = codexHome();
  const setup: Setup = {
    scratch,
    server,
    tasks,
    env: (wrapperDir) => ({
      ...process.env,
      PATH: `${wrapperDir}:${process.env['PATH'] ?? ''}`,
      HOME: home,
      CODEX_HOME: home,
      OPENAI_API_KEY: kKey,
      OPENAI_BASE_URL: '',
      NO_PROXY: '127.0.0.1',
      no_proxy: '127.0.0.1',
    }),
  };
  const results = new Map<number, Round[]>();
  const single: Round[] = [];
  try {
    for (const concurrency of concurrencies) {
      // A warm-up run (not counted): the page cache holds codex and node's files, and its prompts are the direct side's.
      const warm = await runCsvWave(setup, concurrency);
      const prompts = warm.prompts;
      if (prompts.length !== tasks || prompts.some((prompt) => !prompt.includes('Write part'))) fail('the warm-up run did not send one prompt per task');
      await runDirect(setup, concurrency, prompts);
      const list: Round[] = [];
      for (let round = 0; round < rounds; round++) {
        let csvWave: Side;
        let direct: Side;
        if (round % 2 === 0) {
          csvWave = await runCsvWave(setup, concurrency);
          direct = await runDirect(setup, concurrency, prompts);
        } else {
          direct = await runDirect(setup, concurrency, prompts);
          csvWave = await runCsvWave(setup, concurrency);
        }
        list.push({ csvWave, direct });
        console.log(
          `concurrency ${concurrency} round ${round + 1}/${rounds}: csv-wave ${fixed(csvWave.wallSeconds)} s wall, direct ${fixed(direct.wallSeconds)} s; ` +
            `csv-wave own CPU ${fixed((1000 * ownCpu(csvWave)) / tasks, 1)} ms/task, direct pool ${fixed((1000 * ownCpu(direct)) / tasks, 1)} ms/task`,
        );
      }
      results.set(concurrency, list);
    }
    // The same with one task: csv-wave's fixed cost (start-up, version check, files, report), which the per-task figures above share out.
    setup.tasks = 1;
    const warm = await runCsvWave(setup, 1);
    await runDirect(setup, 1, warm.prompts);
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0 ? await runCsvWave(setup, 1) : await runDirect(setup, 1, warm.prompts);
      const second = round % 2 === 0 ? await runDirect(setup, 1, warm.prompts) : await runCsvWave(setup, 1);
      single.push(round % 2 === 0 ? { csvWave: first, direct: second } : { csvWave: second, direct: first });
    }
  } finally {
    await server.close();
    if (!values.keep) rmSync(scratch, { recursive: true, force: true });
    removeTempDirs();
  }
  const uptimeAfter = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  publish(answerMs === 0 ? 'agents' : 'agents-answer-ms', section(results, single, tasks, rounds, loadAtStart, uptimeBefore, uptimeAfter, answerMs), { write });
}

function section(results: Map<number, Round[]>, single: readonly Round[], tasks: number, rounds: number, loadAtStart: string, uptimeBefore: string, uptimeAfter: string, answerMs: number): string {
  const version = spawnSync(codexBinary(), ['--version'], { encoding: 'utf8' }).stdout.trim();
  const ms = (seconds: number) => fixed(1000 * seconds, 1);
  const rows: string[] = [];
  const goals: string[] = [];
  for (const [concurrency, list] of results) {
    const m = (pick: (round: Round) => number) => median(list.map(pick));
    const overhead = m((r) => (r.csvWave.wallSeconds - r.direct.wallSeconds) / r.direct.wallSeconds);
    const overheadMs = m((r) => (r.csvWave.wallSeconds - r.direct.wallSeconds) / tasks);
    const own = m((r) => ownCpu(r.csvWave) / tasks);
    rows.push(
      `| ${concurrency} | ${fixed(m((r) => r.direct.wallSeconds))} | ${fixed(m((r) => r.csvWave.wallSeconds))} | ${fixed(100 * overhead, 1)}% (${ms(overheadMs)} ms/task) | ` +
        `${ms(m((r) => r.direct.codexCpuSeconds / tasks))} | ${ms(m((r) => r.csvWave.codexCpuSeconds / tasks))} | ${ms(own)} | ${ms(m((r) => r.csvWave.mainCpuSeconds / tasks))} | ` +
        `${ms(m((r) => r.csvWave.versionCpuSeconds))} | ${ms(m((r) => ownCpu(r.direct) / tasks))} |`,
    );
    goals.push(
      `| ${concurrency} | ≤ 5% of the CLI's wall time | ${fixed(100 * overhead, 1)}% | ${overhead <= 0.05 ? '**yes**' : '**no**'} |`,
      `| ${concurrency} | ≤ 20 ms of csv-wave CPU per task | ${ms(own)} ms | ${own <= 0.02 ? '**yes**' : '**no**'} |`,
    );
  }
  const fixedWall = median(single.map((r) => r.csvWave.wallSeconds - r.direct.wallSeconds));
  const fixedCpu = median(single.map((r) => ownCpu(r.csvWave)));
  const fixedDirectCpu = median(single.map((r) => ownCpu(r.direct)));
  const marginal = [...results].map(([concurrency, list]) => {
    const own = median(list.map((r) => ownCpu(r.csvWave)));
    const direct = median(list.map((r) => ownCpu(r.direct)));
    const wall = median(list.map((r) => r.csvWave.wallSeconds - r.direct.wallSeconds));
    return `| ${concurrency} | ${ms((own - fixedCpu) / (tasks - 1))} | ${ms((direct - fixedDirectCpu) / (tasks - 1))} | ${ms((wall - fixedWall) / (tasks - 1))} |`;
  });
  const loadAtEnd = loadAverage();
  const loaded =
    Math.max(Number(loadAtStart), Number(loadAtEnd)) > kQuietLoad
      ? [`**Taken at load average ${loadAtStart} (start) to ${loadAtEnd} (end), above ${kQuietLoad}: every figure is noisy, the wall figures most.**`, '']
      : [];
  return [
    answerMs === 0 ? '## Agent tasks: csv-wave against the agent CLI alone (issue 24)' : `## Agent tasks with a model's answer time (${answerMs} ms an answer): csv-wave against the agent CLI alone (issue 24)`,
    '',
    ...machineLines(`scripts/bench/agents.ts${answerMs === 0 ? '' : ` --answer-ms ${answerMs}`}`, 'bench:agents', loadAtStart, [
      `- \`uptime\` before: \`${uptimeBefore}\`; after: \`${uptimeAfter}\``,
      `- ${version || 'codex'} (the devDependency's binary), against a scripted Responses-API server on loopback in the benchmark's process (one answer per request, no tool call${answerMs === 0 ? ', at once' : `, each after ${answerMs} ms, as a model takes its time: \`--answer-ms ${answerMs}\``})`,
      `- Autogroup scheduling ${readAutogroup()}; both sides start each codex in a session of its own (detached), so each gets the same CPU share`,
      `- ${tasks} tasks per run, ${rounds} rounds per concurrency, ABBA order (csv-wave first in odd rounds, direct first in even ones), after one warm-up run of each side; medians of the rounds`,
    ]),
    '',
    'Each run: `csv-wave run DIR --executor codex --model M --base-url URL --concurrency C` on a fresh session of N tasks, ' +
      'against a pool of C lanes running the very `codex exec` arguments csv-wave builds (codexExecArgs) with the prompts csv-wave sent in the warm-up run. ' +
      "Wall time is each side's process from spawn to exit (csv-wave's start-up, its `codex --version` check, tasks.csv, usage.ndjson and the report included). " +
      "CPU: bash's `time` (user+system, to the millisecond) of each side's process counts it and every process it waited for; `codex` on PATH is a bash wrapper " +
      "that runs the real binary under `time` too, so each codex process writes its own CPU. csv-wave's own CPU = its tree's CPU − the codex execs' CPU " +
      "(its main process, all its threads, its version check, and the wrapper's own bash, about 2 ms a task on both sides, against csv-wave). " +
      "Before 2026-12-06 both were GNU time's %U and %S, which cut each figure down to 10 ms: about 10 ms of each codex exec was counted as the side's own CPU, on both sides. " +
      "The main process alone (RUSAGE_SELF at exit) is shown as a check; the direct pool's own CPU is a node process doing nothing but spawning.",
    '',
    '| concurrency | direct wall (s) | csv-wave wall (s) | csv-wave − direct | codex CPU/task, direct (ms) | codex CPU/task, under csv-wave (ms) | **csv-wave own CPU/task (ms)** | of which main process (ms/task) | `codex --version` check (ms, once) | direct pool own CPU/task (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `One task (concurrency 1, ${single.length} rounds, ABBA): csv-wave − direct ${ms(fixedWall)} ms of wall time, csv-wave's own CPU ${ms(fixedCpu)} ms ` +
      `(the direct pool's: ${ms(fixedDirectCpu)} ms): ` +
      "its fixed cost per run, shared out in the per-task figures above. What each task beyond the first adds (the runs of N tasks less the run of one, over N − 1):",
    '',
    '| concurrency | csv-wave own CPU per added task (ms) | direct pool own CPU per added task (ms) | csv-wave − direct wall per added task (ms) |',
    '|---|---|---|---|',
    ...marginal,
    '',
    ...loaded,
    '| concurrency | goal | measured | met |',
    '|---|---|---|---|',
    ...goals,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  runMain('bench:agents', 'npx tsx scripts/bench/agents.ts [--tasks N] [--rounds N] [--concurrency 1,8] [--answer-ms N] [--quick] [--write | --no-write] [--no-build] [--keep]', main);
}
