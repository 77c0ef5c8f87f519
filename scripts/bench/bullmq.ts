/**
 * Issue 27's goals for `--backend bullmq`, measured by the three scripts that each start their
 * own loopback redis-server (bullmq-tasks.sh, bullmq-memory.sh, bullmq-scale.sh), and written
 * as BENCHMARKS.md's section `bullmq`: no-op tasks/s with 2 workers, the coordinator's peak
 * RSS with 100,000 jobs queued, and the wall-time speed-up of 4 workers over one. Each script
 * interleaves what it compares and ends with one `RESULT` line of JSON, read here.
 *
 * A figure taken at a load average above 2 does not count as met: the section says so.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, fail, fixed, isMain, kRoot, loadAverage, machineLines, publish, runMain } from './lib.js';

/** Above this load average (on the shared 2-core box) a goal's figure does not count. */
const kQuietLoad = 2;

interface TasksResult {
  tasks: number;
  workers: number;
  perWorker: number;
  inFlight: number;
  rounds: number;
  tasksPerSecond: number;
  perRound: number[];
  localOverBullmq: number;
  loadStart: string;
  loadEnd: string;
}

interface MemoryResult {
  tasks: number;
  queuedSeconds: number;
  peakMb: number;
  userSeconds: number;
  left: number;
  redisMb: number;
  loadStart: string;
  loadEnd: string;
}

interface ScaleResult {
  tasks: number;
  waitMs: number;
  rounds: number;
  wall1: number;
  wall2: number;
  wall4: number;
  wallSpeedup2: number;
  wallSpeedup4: number;
  runSpeedup2: number;
  runSpeedup4: number;
  loadStart: string;
  loadEnd: string;
}

/** Runs a bench script, its output passed through, and returns its RESULT line's JSON. */
function runScript<T>(script: string, args: readonly string[]): Promise<T> {
  console.log(`\n$ bash scripts/bench/${script} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(kRoot, 'scripts', 'bench', script), ...args], { cwd: kRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const line = output.split('\n').find((each) => each.startsWith('RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`scripts/bench/${script} ended with code ${code} and no RESULT line`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as T);
    });
  });
}

/** The highest of the 1-minute load averages a script printed at its start and end. */
const peakLoad = (...results: { loadStart: string; loadEnd: string }[]): number =>
  Math.max(...results.flatMap(({ loadStart, loadEnd }) => [loadStart, loadEnd].map((load) => Number(load.split(' ')[0]))));

function met(ok: boolean, load: number): string {
  if (load > kQuietLoad) return `${ok ? 'reached' : 'not reached'}, at load ${fixed(load, 1)}: does not count`;
  return ok ? '**yes**' : '**no**';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      write: { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const quick = values.quick ?? false;
  const write = (values.write ?? false) || (!values['no-write'] && !quick);
  ensureBuilt(!values['no-build']);
  const loadAtStart = loadAverage();
  const uptimeBefore = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  const tasks = await runScript<TasksResult>('bullmq-tasks.sh', quick ? ['2', '2000'] : ['5', '5000', '2', '64', '512']);
  const memory = await runScript<MemoryResult>('bullmq-memory.sh', [quick ? '20000' : '100000']);
  const scale = await runScript<ScaleResult>('bullmq-scale.sh', quick ? ['2'] : ['5']);
  const uptimeAfter = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  const load = (each: { loadStart: string; loadEnd: string }) => `${each.loadStart.split(' ')[0]} → ${each.loadEnd.split(' ')[0]}`;
  const section = [
    '## Many machines: issue 27 goals for `--backend bullmq`',
    '',
    ...machineLines('scripts/bench/bullmq.ts', 'bench:bullmq', loadAtStart, [
      `- \`uptime\` before: \`${uptimeBefore}\`; after: \`${uptimeAfter}\``,
      '- Coordinator, Redis (loopback, no persistence) and every worker on this one machine; a fresh secret per script (jobs and replies signed)',
    ]),
    '',
    ...(peakLoad(tasks, memory, scale) > kQuietLoad ? [`**Taken above load average ${kQuietLoad}: no goal counts as met here.**`, ''] : []),
    '| goal | command | measured | load (1 min, start → end) | met |',
    '|---|---|---|---|---|',
    `| ≥ 2,000 no-op module tasks/s end to end, 2 workers | \`bullmq-tasks.sh ${tasks.rounds} ${tasks.tasks} ${tasks.workers} ${tasks.perWorker} ${tasks.inFlight}\` | ` +
      `${fixed(tasks.tasksPerSecond, 0)} tasks/s (median; rounds ${tasks.perRound.map((each) => fixed(each, 0)).join(', ')}); the local backend on the same session ${fixed(tasks.localOverBullmq, 2)}× as fast | ` +
      `${load(tasks)} | ${met(tasks.tasksPerSecond >= 2000, peakLoad(tasks))} |`,
    `| coordinator peak RSS < 1 GB with 100,000 jobs queued | \`bullmq-memory.sh ${memory.tasks}\` | ${fixed(memory.peakMb, 0)} MB (${memory.tasks} queued in ${fixed(memory.queuedSeconds, 1)} s, ` +
      `${fixed(memory.userSeconds, 1)} s user CPU; Redis ${fixed(memory.redisMb, 0)} MB; ${memory.left} jobs left after Ctrl-C) | ${load(memory)} | ` +
      `${memory.tasks < 100000 ? 'not the goal\'s size (--quick)' : met(memory.peakMb < 1024, peakLoad(memory))} |`,
    `| 4 workers ≥ 3.6× one on wall time, coordinator start-up included | \`bullmq-scale.sh ${scale.rounds}\` (${scale.tasks} tasks of ${scale.waitMs} ms, worker concurrency 16) | ` +
      `${fixed(scale.wallSpeedup4, 2)}× (2 workers ${fixed(scale.wallSpeedup2, 2)}×; median walls ${fixed(scale.wall1, 1)} / ${fixed(scale.wall2, 1)} / ${fixed(scale.wall4, 1)} s; ` +
      `of the run's own durationMs ${fixed(scale.runSpeedup4, 2)}× and ${fixed(scale.runSpeedup2, 2)}×) | ${load(scale)} | ${met(scale.wallSpeedup4 >= 3.6, peakLoad(scale))} |`,
  ].join('\n');
  publish('bullmq', section, { write });
}

if (isMain(import.meta.url)) {
  runMain('bench:bullmq', 'npx tsx scripts/bench/bullmq.ts [--quick] [--write | --no-write] [--no-build]', main);
}

export { fail };
