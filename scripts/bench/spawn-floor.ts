/**
 * The floor under issue 27's goal 1 (`npm run bench:spawn`): what starting `/bin/sh -c true`
 * costs by who starts it, 4 at a time. A bare node loop (spawn with three pipes in a new
 * process group, as csv-wave's launcher does, and nothing else), `xargs -P4` and `ninja -j4`
 * (N independent edges), and csv-wave itself (`run --cmd true --concurrency 4` on N
 * independent tasks). GNU time gives each one's CPU, its children's included, so the CPU per
 * task shows how much of csv-wave's cost is node's fork and how much is csv-wave's own work.
 * Rounds are interleaved (the order reversed every other round). Section `<!-- bench:spawn -->`.
 *
 *   npx tsx scripts/bench/spawn-floor.ts [--tasks 1000] [--runs 3] [--write] [--no-build]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { detectRssMethod, ensureBuilt, fail, fixed, isMain, kRoot, loadAverage, machineLines, median, positiveInteger, publish, runMain, spread, timed, writeSession, type RunSummaryJson } from './lib.js';

const kUsage = 'npx tsx scripts/bench/spawn-floor.ts [--tasks 1000] [--runs 3] [--write] [--no-build]';

/** Spawns `/bin/sh -c true` N times, C at a time, with three pipes and a process group of its own, reading both outputs. */
const kNodeLoop = `import { spawn } from 'node:child_process';
const [n, c] = process.argv.slice(2).map(Number);
let started = 0;
let done = 0;
const one = () => {
  if (started === n) return;
  started += 1;
  const child = spawn('/bin/sh', ['-c', 'true'], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  child.stdout.resume();
  child.stderr.resume();
  child.on('close', (code) => {
    if (code !== 0) throw new Error('sh exited ' + code);
    done += 1;
    if (done === n) console.log(JSON.stringify(process.cpuUsage()));
    else one();
  });
};
for (let i = 0; i < c; i += 1) one();
`;

interface Runner {
  label: string;
  /** The command of one round, with what it needs made fresh. */
  command: (round: number) => string[] | { node: string[] };
  /** Checks the run did its N tasks; the CPU of node's own process, when it says it. */
  check: (stdout: string) => number | undefined;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { tasks: { type: 'string', default: '1000' }, runs: { type: 'string', default: '3' }, write: { type: 'boolean', default: false }, 'no-build': { type: 'boolean', default: false } },
  });
  const tasks = positiveInteger('--tasks', values.tasks);
  const runs = positiveInteger('--runs', values.runs);
  ensureBuilt(!values['no-build']);
  const scratch = mkdtempSync(join(tmpdir(), 'csv-wave-bench-spawn-'));
  if (detectRssMethod(scratch) !== 'gnu-time') fail('this benchmark needs GNU time (/usr/bin/time): the CPU of the children counts');
  const loadAtStart = loadAverage();
  try {
    const loop = join(scratch, 'loop.mjs');
    writeFileSync(loop, kNodeLoop);
    const ids = join(scratch, 'ids.txt');
    writeFileSync(ids, `${Array.from({ length: tasks }, (_, i) => `t${i}`).join('\n')}\n`);
    const ninjaDir = join(scratch, 'ninja');
    mkdirSync(ninjaDir);
    const edges = Array.from({ length: tasks }, (_, i) => `build t${i}: true_rule`);
    writeFileSync(join(ninjaDir, 'build.ninja'), `rule true_rule\n  command = true\n${edges.join('\n')}\n`);
    const csv = `id,title,description,deps\n${Array.from({ length: tasks }, (_, i) => `t${i},t${i},true,`).join('\n')}\n`;
    const sessionOf = (round: number) => join(scratch, `session-${round}`);
    const runners: Runner[] = [
      {
        label: 'a bare node loop: `spawn(\'/bin/sh\', [\'-c\', \'true\'])`, three pipes, its own process group',
        command: () => [process.execPath, loop, String(tasks), '4'],
        check: (stdout) => {
          const usage = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { user?: number; system?: number };
          if (usage.user === undefined || usage.system === undefined) fail(`the node loop printed no CPU usage: ${stdout}`);
          return (usage.user + usage.system) / 1e6;
        },
      },
      { label: '`xargs -P 4 -n 1 /bin/sh -c true sh`', command: () => ['xargs', '-P', '4', '-n', '1', '-a', ids, '/bin/sh', '-c', 'true', 'sh'], check: () => undefined },
      {
        label: '`ninja -j 4`, one edge per task',
        command: () => {
          // Without its log of the last round, ninja runs every edge again.
          rmSync(join(ninjaDir, '.ninja_log'), { force: true });
          rmSync(join(ninjaDir, '.ninja_deps'), { force: true });
          return ['ninja', '-C', ninjaDir, '-j', '4', '--quiet'];
        },
        check: () => undefined,
      },
      {
        label: 'csv-wave `run --cmd true --concurrency 4` (journal and tasks.csv included)',
        command: (round) => {
          const dir = sessionOf(round);
          rmSync(dir, { recursive: true, force: true });
          writeSession(dir, csv);
          return { node: ['run', dir, '--cmd', 'true', '--concurrency', '4', '--json'] };
        },
        check: (stdout) => {
          const summary = JSON.parse(stdout) as RunSummaryJson;
          if (summary.counts['completed'] !== tasks) fail(`csv-wave completed ${String(summary.counts['completed'])} of ${tasks} tasks`);
          return undefined;
        },
      },
    ];
    const figures = runners.map(() => ({ wall: [] as number[], cpu: [] as number[], self: [] as number[] }));
    const loads: string[] = [];
    for (let round = 0; round < runs; round += 1) {
      const order = round % 2 === 0 ? runners.map((_, i) => i) : runners.map((_, i) => runners.length - 1 - i);
      for (const index of order) {
        const runner = runners[index]!;
        const measure = await timed(runner.command(round), { cwd: kRoot, scratch, rssMethod: 'gnu-time' });
        if (measure.status !== 0) fail(`${runner.label} failed (exit ${String(measure.status)}): ${measure.stderr.slice(-2000)}`);
        const self = runner.check(measure.stdout);
        figures[index]!.wall.push(measure.seconds);
        figures[index]!.cpu.push(measure.cpuSeconds);
        if (self !== undefined) figures[index]!.self.push(self);
        console.log(`round ${round + 1}: ${runner.label}: ${fixed(measure.seconds)} s wall, ${fixed(measure.cpuSeconds)} s CPU`);
      }
      loads.push(loadAverage());
    }

    const perTask = (seconds: number) => fixed((1000 * seconds) / tasks);
    const lines: string[] = ['## Starting a process: the floor under goal 1', ''];
    lines.push(
      `${tasks.toLocaleString('en-US')} independent \`/bin/sh -c true\`, 4 at a time, by four starters. CPU is user + system of the starter and every ` +
        `process it waited for (GNU time), so it holds the fork and exec of each shell. ${runs} round(s), the order reversed every other round; medians (min–max).`,
      '',
      ...machineLines('scripts/bench/spawn-floor.ts', 'bench:spawn', loadAtStart, [`- Load average after each round: ${loads.join(', ')}`]),
      '',
      '| starter | wall s | CPU s | CPU ms per task | of which the starter itself, ms per task |',
      '|---|---:|---:|---:|---:|',
    );
    runners.forEach((runner, i) => {
      const f = figures[i]!;
      lines.push(`| ${runner.label} | ${spread(f.wall)} | ${fixed(median(f.cpu))} | ${perTask(median(f.cpu))} | ${f.self.length > 0 ? perTask(median(f.self)) : '–'} |`);
    });
    const cpu = (i: number) => median(figures[i]!.cpu);
    lines.push(
      '',
      `CPU per task against ninja's: the bare node loop ${fixed(cpu(0) / cpu(2))}×, xargs ${fixed(cpu(1) / cpu(2))}×, csv-wave ${fixed(cpu(3) / cpu(2))}×. ` +
        `csv-wave's own work above the bare loop: ${perTask(cpu(3) - cpu(0))} ms of CPU per task (node start-up, validation, journal and tasks.csv included). ` +
        'Node 20 starts a process by fork() of its whole address space (libuv 1.46 has no posix_spawn on Linux); ninja and xargs are small processes.',
    );
    publish('spawn', lines.join('\n'), { write: values.write });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) runMain('spawn-floor', kUsage, main);
