/**
 * Issue 22's attack "Redis restarted with and without AOF, and Redis at maxmemory with
 * noeviction, during a run": a coordinator (`run --backend bullmq`) of TASKS gated tasks and
 * WORKERS `csv-wave worker`s (2 jobs at once each), on a real redis-server of its own, and
 * one fault in the middle of the run, when every worker slot runs a task and jobs wait:
 *
 * - `aof`: redis-server with `--appendonly yes --appendfsync always`, killed with SIGKILL and
 *   started again on the same port and folder HOLD seconds later (it comes back with its data);
 * - `empty`: the same with no AOF and no RDB: it comes back empty;
 * - `oom`: `CONFIG SET maxmemory 1` with `maxmemory-policy noeviction` (every write that may
 *   grow memory refused), held HOLD seconds, then `maxmemory 0` again;
 * - `oom-start`: the coordinator started on a Redis that is already full.
 *
 * Before the fault the coordinator is stopped (SIGSTOP) and two running tasks are released:
 * their jobs finish while nobody reads them, so the fault also meets finished replies not yet
 * read. Then the coordinator goes on (SIGCONT), every task is released, and the script waits
 * for the coordinator's end (a net of NET seconds: past it, the run hung). Each command notes
 * its shell's pid in `<marks>/<id>.pids` when it starts: the count of lines is the count of
 * runs. A `resume` follows when a task is left undone. Prints what happened, as JSON.
 *
 * Usage: npx tsx scripts/redis-faults.ts aof|empty|oom|oom-start [TASKS=16] [WORKERS=2] [HOLD=0] [NET=300]
 * RUN_FLAGS="--redis-timeout 10" adds flags to the run and the resume; EVERY=1 starts the
 * workers without --session-id (they serve every session the registry names). Build dist/ first (npm run build).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { kTestSecret } from '../test/helpers/test-secret.js';

type Mode = 'aof' | 'empty' | 'oom' | 'oom-start';
const kMode = (process.argv[2] ?? 'empty') as Mode;
if (!['aof', 'empty', 'oom', 'oom-start'].includes(kMode)) throw new Error(`unknown mode ${kMode}`);
const kTasks = Number(process.argv[3] ?? 16);
const kWorkers = Number(process.argv[4] ?? 2);
const kHoldMs = Number(process.argv[5] ?? 0) * 1000;
const kNetMs = Number(process.argv[6] ?? 300) * 1000;
const kSlots = 2;
const kBin = resolve('dist/cli/bin.js');
process.env['CSV_WAVE_SECRET'] = kTestSecret;

const t0 = Date.now();
const seconds = () => Math.round((Date.now() - t0) / 100) / 10;
const log = (line: string) => process.stderr.write(`[${seconds()}s] ${line}\n`);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function until(condition: () => boolean | Promise<boolean>, what: string, netMs = kNetMs): Promise<boolean> {
  const deadline = Date.now() + netMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      log(`gave up waiting for ${what}`);
      return false;
    }
    await sleep(50);
  }
  return true;
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const work = mkdtempSync(join(tmpdir(), `redis-faults-${kMode}-`));
const redisDir = join(work, 'redis');
mkdirSync(redisDir);
const port = await freePort();
const url = `redis://127.0.0.1:${port}`;
const persistence = kMode === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''] : ['--appendonly', 'no', '--save', ''];

async function launchRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', redisDir, ...persistence], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  await new Promise<void>((ready, fail) => {
    child.stdout!.on('data', (text: Buffer) => {
      said += text.toString();
      if (said.includes('Ready to accept')) ready();
    });
    child.once('exit', () => fail(new Error(`redis-server exited:\n${said}`)));
  });
  return child;
}

let redis = await launchRedis();
const admin = new Redis(url, { maxRetriesPerRequest: null });
admin.on('error', () => undefined);

const marks = join(work, 'marks');
mkdirSync(marks);
const dir = join(work, 'session');
mkdirSync(join(dir, '.csv-wave'), { recursive: true });
const ids = Array.from({ length: kTasks }, (_, index) => `T${String(index + 1).padStart(2, '0')}`);
writeFileSync(join(dir, 'tasks.csv'), `id,title,description,role,deps,context_from,exec_mode\n${ids.map((id) => `${id},,task ${id},worker,,,`).join('\n')}\n`);
writeFileSync(join(dir, 'session.json'), '{"pipeline":"generic"}');
const sessionId = `redis-faults-${kMode}`;
writeFileSync(join(dir, '.csv-wave', 'session-id'), `${sessionId}\n`);
// Runs until <marks>/release or <marks>/release-<id> exists; notes each run's pid, and its end.
const command = `echo $$ >> ${marks}/{id}.pids; while [ ! -e ${marks}/release ] && [ ! -e ${marks}/release-{id} ]; do sleep 0.05; done; echo $$ >> ${marks}/{id}.ends; echo done-{id}`;

interface Spawned {
  child: ChildProcess;
  out: () => string;
  lines: { at: number; line: string }[];
  exited: Promise<number | null>;
}

function cli(...argv: string[]): Spawned {
  const child = spawn(process.execPath, [kBin, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const lines: { at: number; line: string }[] = [];
  const take = (text: Buffer) => {
    out += text.toString();
    for (const line of text.toString().split('\n')) if (line.trim() !== '') lines.push({ at: seconds(), line });
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return { child, out: () => out, lines, exited };
}

const countLines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').length : 0);
const runsOf = (id: string) => countLines(join(marks, `${id}.pids`));
const endsOf = (id: string) => countLines(join(marks, `${id}.ends`));
const started = () => ids.filter((id) => runsOf(id) > 0);
const waitingJobs = async () => (await admin.llen(`bull:csv-wave-${sessionId}:wait`).catch(() => -1)) as number;

const workers: Spawned[] = [];
for (let index = 0; index < kWorkers; index++) {
  // EVERY=1: workers without --session-id, which find the session in the registry (a Redis emptied loses it until the next beat).
  const which = process.env['EVERY'] === '1' ? [] : ['--session-id', sessionId];
  const worker = cli('worker', '--redis', url, ...which, '--concurrency', String(kSlots));
  workers.push(worker);
  await until(() => worker.out().includes('taking jobs'), 'a ready worker');
}
log(`${kWorkers} workers ready on ${url}`);

const fault: Record<string, unknown> = { mode: kMode };
// RUN_FLAGS: more flags for the run and the resume (e.g. `--redis-timeout 10`).
const runArgs = ['--cmd', command, '--concurrency', String(kWorkers * kSlots * 2), '--backend', 'bullmq', '--redis', url, ...(process.env['RUN_FLAGS'] ?? '').split(' ').filter(Boolean)];

if (kMode === 'oom-start') {
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  await admin.config('SET', 'maxmemory', '1');
  const full = cli('run', dir, ...runArgs);
  const code = await Promise.race([full.exited, sleep(kNetMs).then(() => 'hung')]);
  fault['fullStart'] = { code, lines: full.lines.map(({ at, line }) => `${at}s ${line}`).slice(-12), runs: ids.map(runsOf).reduce((a, b) => a + b, 0) };
  if (code === 'hung') full.child.kill('SIGKILL');
  await admin.config('SET', 'maxmemory', '0');
  writeFileSync(join(marks, 'release'), '');
  const again = cli('run', dir, ...runArgs);
  fault['thenRun'] = { code: await again.exited };
} else {
  const coordinator = cli('run', dir, ...runArgs);
  // Every worker slot runs a task, and jobs wait behind them.
  await until(async () => started().length >= kWorkers * kSlots && (await waitingJobs()) >= kSlots, 'busy workers and waiting jobs');
  log(`running: ${started().join(' ')}; waiting jobs: ${await waitingJobs()}`);
  // Finished replies nobody read: the coordinator stopped, two running tasks released.
  coordinator.child.kill('SIGSTOP');
  const unread = started().slice(0, 2);
  for (const id of unread) writeFileSync(join(marks, `release-${id}`), '');
  await until(() => unread.every((id) => endsOf(id) === 1) && started().length >= kWorkers * kSlots + 2, 'the released tasks ended and the workers took others');
  await sleep(500); // their replies reach Redis
  fault['unreadAtFault'] = unread;
  fault['runningAtFault'] = started().filter((id) => endsOf(id) === 0);
  fault['waitingJobsAtFault'] = await waitingJobs();
  const faultAt = seconds();
  fault['faultAt'] = faultAt;
  if (kMode === 'aof' || kMode === 'empty') {
    redis.kill('SIGKILL');
    await new Promise((done) => redis.once('exit', done));
    coordinator.child.kill('SIGCONT');
    await sleep(kHoldMs);
    redis = await launchRedis();
    fault['keysAfterRestart'] = await admin.dbsize();
    log(`redis killed and started again: ${String(fault['keysAfterRestart'])} keys`);
  } else {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    coordinator.child.kill('SIGCONT');
    log('redis full (maxmemory 1)');
    // Two more tasks end while Redis is full: their replies meet the OOM.
    const more = started().filter((id) => endsOf(id) === 0).slice(0, 2);
    for (const id of more) writeFileSync(join(marks, `release-${id}`), '');
    fault['endedWhileFull'] = more;
    await sleep(kHoldMs);
    const stats = await admin.info('errorstats');
    fault['oomErrors'] = Number(/errorstat_OOM:count=(\d+)/.exec(stats)?.[1] ?? 0);
    await admin.config('SET', 'maxmemory', '0');
    log(`redis takes writes again after ${kHoldMs / 1000} s (${String(fault['oomErrors'])} OOM errors)`);
  }
  writeFileSync(join(marks, 'release'), '');
  const code = await Promise.race([coordinator.exited, sleep(kNetMs).then(() => 'hung')]);
  if (code === 'hung') coordinator.child.kill('SIGKILL');
  fault['runExit'] = code;
  fault['runSeconds'] = seconds();
  const notice = coordinator.lines.find(({ at, line }) => at >= faultAt && /RETRY|vanished|Redis|OOM|FAIL/.test(line));
  fault['firstNotice'] = notice ? { afterSeconds: Math.round((notice.at - faultAt) * 10) / 10, line: notice.line.slice(0, 300) } : undefined;
  fault['coordinatorLines'] = coordinator.lines
    .filter(({ line }) => /RETRY|FAIL|vanished|Redis|OOM|warn|dropped|Stopped|Ran |bullmq:/.test(line))
    .map(({ at, line }) => `${at}s ${line.slice(0, 240)}`)
    .slice(0, 60);
}

function rows(): Record<string, string>[] {
  return parse(readFileSync(join(dir, 'tasks.csv'), 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
}
function attempts(): Map<string, string[]> {
  const byTask = new Map<string, string[]>();
  const file = join(dir, 'attempts.ndjson');
  if (!existsSync(file)) return byTask;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { task, outcome } = JSON.parse(line) as { task: string; outcome: string };
    byTask.set(task, [...(byTask.get(task) ?? []), outcome]);
  }
  return byTask;
}
function tally(): Record<string, unknown> {
  const statuses: Record<string, number> = {};
  const wrong: string[] = [];
  for (const row of rows()) {
    statuses[row['status'] || '(empty)'] = (statuses[row['status'] || '(empty)'] ?? 0) + 1;
    if (row['status'] === 'completed' && row['findings'] !== `done-${row['id']}`) wrong.push(`${row['id']}: ${row['findings']}`);
    if (row['status'] === 'failed') wrong.push(`${row['id']} failed: ${String(row['error']).slice(0, 160)}`);
  }
  const runs: Record<string, number> = {};
  for (const id of ids) runs[String(runsOf(id))] = (runs[String(runsOf(id))] ?? 0) + 1;
  const twice = ids.filter((id) => runsOf(id) > 1).map((id) => `${id}×${runsOf(id)}`);
  const recorded = [...attempts()].filter(([, outcomes]) => outcomes.filter((outcome) => outcome === 'completed').length > 1).map(([id]) => id);
  return { statuses, wrong, tasksByRuns: runs, ranMoreThanOnce: twice, completedTwiceInAttempts: recorded, commandsRun: ids.map(runsOf).reduce((a, b) => a + b, 0) };
}

fault['afterRun'] = tally();
fault['attempts'] = Object.fromEntries([...attempts()].filter(([, outcomes]) => outcomes.length > 1 || outcomes[0] !== 'completed'));
if (rows().some((row) => row['status'] !== 'completed')) {
  const resumed = cli('resume', dir, ...runArgs);
  fault['resumeExit'] = await Promise.race([resumed.exited, sleep(kNetMs).then(() => 'hung')]);
  fault['afterResume'] = tally();
}
fault['keysLeft'] = (await admin.keys(`bull:csv-wave-${sessionId}:*`)).length;
fault['jobsLeft'] = (await admin.keys(`bull:csv-wave-${sessionId}:${sessionId}.*`)).length;
const stopAt = seconds();
for (const worker of workers) worker.child.kill('SIGTERM');
const workerExits = await Promise.race([Promise.all(workers.map((worker) => worker.exited.then((code) => `${code} after ${Math.round(seconds() - stopAt)} s`))), sleep(60_000).then(() => 'not within 60 s')]);
fault['workersOnSigterm'] = workerExits;
for (const worker of workers) worker.child.kill('SIGKILL');
workers.forEach((worker, index) => writeFileSync(join(work, `worker-${index + 1}.log`), worker.lines.map(({ at, line }) => `${at}s ${line}\n`).join('')));
fault['workerErrors'] = workers.flatMap((worker) => worker.lines.filter(({ line }) => /worker: |Error|OOM|Missing/.test(line)).map(({ at, line }) => `${at}s ${line.slice(0, 200)}`)).slice(0, 30);
fault['workerJobLines'] = workers.flatMap((worker) => worker.lines.filter(({ line }) => line.startsWith('[JOB]')).map(({ line }) => line.slice(0, 160)));
admin.disconnect();
redis.kill('SIGTERM');
console.log(JSON.stringify(fault, null, 2));
log(`folder: ${work} (${readdirSync(marks).length} mark files)`);
process.exit(0);
