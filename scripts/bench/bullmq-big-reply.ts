/**
 * Issue 22's attack "a 50 MB reply from a worker": a coordinator (`run --backend bullmq`) of
 * a two-task session, and instead of `csv-wave worker` a plain BullMQ worker (the tests'
 * forgeReplies) that answers task A's job with a well-formed reply whose findings are MB
 * mebibytes, and task B's with a small honest one. Prints the coordinator's RSS when A's job
 * was taken (before the big reply), once A's reply was handled, its peak over the run
 * (VmHWM, read every 50 ms) and at its end; how the run ended; the longest cell of
 * tasks.csv and the size of the session's files.
 * Usage: npx tsx scripts/bench/bullmq-big-reply.ts [MB=50]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { forgeReplies, unruledReply } from '../../test/helpers/forged-reply.js';
import { kTestSecret } from '../../test/helpers/test-secret.js';

const kMegabytes = Number(process.argv[2] ?? 50);
const kBin = resolve('dist/cli/bin.js');

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The coordinator's resident and peak resident memory, in MB, from /proc. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const found = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status);
    // A process that exited (a zombie) has no memory figures: the last ones read stand.
    if (!found) throw new Error(`no ${field}`);
    return Number(found[1]);
  };
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/** A finished reply as a worker that skipped every rule would send it (JSON text), its findings once. */
function replyText(taskId: string, findings: string): string {
  const reply = unruledReply(taskId, 'worker', { findings });
  return JSON.stringify({ ...reply, discovery: { ...reply.discovery, findings: '' } });
}

/** Total bytes of the files under `dir`. */
function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}

const work = mkdtempSync(join(tmpdir(), 'bullmq-big-reply-'));
const port = await freePort();
const url = `redis://127.0.0.1:${port}`;
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', work, '--save', '', '--appendonly', 'no']);
await new Promise<void>((ready) => redis.stdout.on('data', (text: Buffer) => text.toString().includes('Ready to accept') && ready()));

const dir = join(work, 's');
mkdirSync(join(dir, '.csv-wave'), { recursive: true });
writeFileSync(join(dir, 'tasks.csv'), 'id,title,description,role,deps,context_from,exec_mode\nA,,big,worker,,,\nB,,small,worker,,,\n');
writeFileSync(join(dir, 'session.json'), '{"pipeline":"generic"}');
writeFileSync(join(dir, '.csv-wave', 'session-id'), 'big-reply\n');

// The coordinator signs its jobs with the tests' secret (test-secret.ts puts it in this environment); the forger seals with it.
const coordinator = spawn(process.execPath, [kBin, 'run', dir, '--cmd', 'true', '--backend', 'bullmq', '--redis', url], { stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
coordinator.stdout.on('data', (text: Buffer) => (output += text.toString()));
coordinator.stderr.on('data', (text: Buffer) => (output += text.toString()));
const exited = new Promise<number | null>((done) => coordinator.on('exit', (code) => done(code)));

const figures: Record<string, number> = {};
const big = 'x'.repeat(kMegabytes * 1024 * 1024);
// One job at a time: A's big reply first, then B's, so that B shows whether the run goes on.
const forged = await forgeReplies(url, 'big-reply', (request) => {
  // B a few seconds after A: the coordinator is still running when BullMQ's event stream
  // brings it A's return value too (the look-up may have settled A first).
  if (request.task.id !== 'A') return new Promise<string>((done) => setTimeout(() => done(replyText(request.task.id, 'small and honest')), 5000));
  const before = memoryOf(coordinator.pid!);
  figures.rssBeforeMb = before.rss;
  figures.peakBeforeMb = before.peak;
  return replyText(request.task.id, big);
}, kTestSecret);
let afterA: { rss: number; peak: number } | undefined;
/** The last figures read before the coordinator exited: its peak over the whole run. */
let final: { rss: number; peak: number } | undefined;
const watch = setInterval(() => {
  try {
    final = memoryOf(coordinator.pid!);
    const attempts = readFileSync(join(dir, 'attempts.ndjson'), 'utf8');
    if (afterA === undefined && attempts.includes('"task":"A"')) afterA = final;
  } catch {
    // not written yet, or the coordinator is gone
  }
}, 50);
const code = await exited;
clearInterval(watch);
await forged.stop();

const tasks = readFileSync(join(dir, 'tasks.csv'), 'utf8');
const rows = parse(tasks, { columns: true }) as Record<string, string>[];
const longest = Math.max(...rows.flatMap((row) => Object.values(row).map((cell) => cell.length)));
const statusOf = (id: string) => rows.find((row) => row.id === id)?.status ?? '?';
const last = output.trim().split('\n').slice(-3).join(' | ');
console.log(
  `reply of ${kMegabytes} MB: coordinator RSS ${figures.rssBeforeMb} MB before (peak ${figures.peakBeforeMb} MB), ` +
    `${afterA?.rss ?? '?'} MB once A was handled (peak ${afterA?.peak ?? '?'} MB), peak ${final?.peak ?? '?'} MB over the run, ${final?.rss ?? '?'} MB at its end; ` +
    `exit ${code}; A ${statusOf('A')}, B ${statusOf('B')}; ` +
    `longest tasks.csv cell ${longest} characters, tasks.csv ${tasks.length} bytes, session folder ${folderBytes(dir)} bytes; ` +
    `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n  last lines: ${last.slice(0, 400)}`,
);
redis.kill();
spawnSync('sleep', ['0.2']);
rmSync(work, { recursive: true, force: true });
