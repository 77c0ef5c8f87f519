import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../scripts/gen-dag.js';
import { readJournal, replayJournal, type JournalEntry } from '../../src/session/journal.js';
import { jobIdSource, redisForFile } from '../helpers/bullmq-session.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kRunRedisTests } from '../helpers/redis-server.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

/** Replay a failure with CSV_WAVE_KILL_SEED=<the seed in the test name>. */
const kSeed = Number(process.env['CSV_WAVE_KILL_SEED'] ?? 13013);
const kSessionId = 'kill-random';
const kQueue = `csv-wave-${kSessionId}`;
/** 3 waves of 16: each task of a later wave depends on one of the wave before. */
const kTasks = 48;
const kKills = 5;

function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '') : [];
}

/** How many times each task's command started, from `<marks>/<id>.runs`. */
function runsByTask(marks: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const name of readdirSync(marks)) if (name.endsWith('.runs')) runs.set(name.slice(0, -'.runs'.length), lines(join(marks, name)).length);
  return runs;
}

function session(): string {
  const rows = Array.from({ length: kTasks }, (_, index) => ({
    id: `T${index + 1}`,
    description: `task ${index + 1}`,
    role: 'worker',
    deps: index >= 16 ? `T${index + 1 - 16}` : '',
  }));
  const dir = buildSession(rows);
  mkdirSync(join(dir, '.csv-wave'), { recursive: true });
  writeFileSync(join(dir, '.csv-wave', 'session-id'), `${kSessionId}\n`);
  return dir;
}

/** The tasks whose results the session holds after a crash: tasks.csv with the journal applied, as resume reads them. */
function acceptedTasks(dir: string, journal: readonly JournalEntry[]): Set<string> {
  const rows = [...readRows(dir).values()];
  replayJournal(rows, journal);
  return new Set(rows.filter((row) => row.status === 'completed').map((row) => row.id));
}

const redis = redisForFile();

describe.runIf(kRunRedisTests)('the coordinator killed with kill -9 at random moments', () => {
  it(`${kKills} kills after a seeded number of task starts or job adds (seed ${kSeed}), then resume: nothing lost, nothing twice`, { timeout: 900_000 }, async () => {
    const random = mulberry32(kSeed);
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const dir = session();
    const command = `echo ran >> ${marks}/{id}.runs; sleep 0.2; echo done-{id}`;
    const args = ['--cmd', command, '--concurrency', '8', '--backend', 'bullmq', '--redis', redis.url];
    // Every add of the session's jobs, as BullMQ tells it (an add of an id that exists is no add).
    const events = new QueueEvents(kQueue, { connection: { url: redis.url, maxRetriesPerRequest: null } });
    const adds = new Map<string, number>();
    let addCount = 0;
    events.on('added', ({ jobId }) => {
      adds.set(jobId, (adds.get(jobId) ?? 0) + 1);
      addCount++;
    });
    await events.waitUntilReady();
    const workers: SpawnedCli[] = [];
    for (let index = 0; index < 2; index++) {
      const worker = spawnCli('worker', '--redis', redis.url, '--session-id', kSessionId, '--concurrency', '4');
      workers.push(worker);
    }
    const snapshots: { accepted: Set<string>; runs: Map<string, number> }[] = [];
    const finishes: JournalEntry[] = [];
    const starts = () => [...runsByTask(marks).values()].reduce((sum, count) => sum + count, 0);
    // The journal is emptied at each rewrite of tasks.csv (about a second): its finish entries
    // are read while the coordinators run too, not only at the kills, so that some are seen.
    const seen = new Set<string>();
    const collect = () => {
      for (const entry of readJournal(dir)) {
        if (entry.type !== 'finish' || seen.has(entry.id)) continue;
        seen.add(entry.id);
        finishes.push(entry);
      }
    };
    const watch = setInterval(collect, 20);
    try {
      for (const worker of workers) await waitFor(() => worker.stdoutSoFar().includes('taking jobs'), 'a ready worker');
      for (let kill = 0; kill < kKills; kill++) {
        const byStarts = kill % 2 === 0;
        const k = 1 + Math.floor(random() * 6);
        const from = byStarts ? starts() : addCount;
        const coordinator = spawnCli(kill === 0 ? 'run' : 'resume', dir, ...args);
        let exited = false;
        void coordinator.exited.then(() => (exited = true));
        await waitFor(() => exited || (byStarts ? starts() : addCount) >= from + k, `${k} more ${byStarts ? 'task starts' : 'job adds'}`);
        coordinator.child.kill('SIGKILL');
        await coordinator.exited;
        const journal = readJournal(dir);
        collect();
        snapshots.push({ accepted: acceptedTasks(dir, journal), runs: runsByTask(marks) });
      }
      const last = spawnCli('resume', dir, ...args);
      const ended = await last.exited;
      expect(ended.code, ended.stderr).toBe(0);
    } finally {
      clearInterval(watch);
      for (const worker of workers) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      await events.close();
    }

    // Every task done once, with its own result; no row twice.
    const rows = readRows(dir);
    expect(rows.size).toBe(kTasks);
    for (let index = 1; index <= kTasks; index++) expect(rows.get(`T${index}`)).toMatchObject({ status: 'completed', findings: `done-T${index}` });
    const csvIds = readFileSync(join(dir, 'tasks.csv'), 'utf8').match(/^"T\d+"/gm) ?? [];
    expect(csvIds).toHaveLength(kTasks);
    // No accepted result lost: a task whose result the session held at a kill never ran again.
    const finalRuns = runsByTask(marks);
    for (const [index, snapshot] of snapshots.entries()) {
      for (const id of snapshot.accepted) expect(finalRuns.get(id), `task ${id}, accepted before kill ${index + 1}`).toBe(snapshot.runs.get(id));
    }
    // No job added twice for one attempt, and no task given a second job: a resume awaits the jobs
    // its journal names (the killed run's ids), so no task ran twice either (no worker died).
    expect([...adds.entries()].filter(([, count]) => count > 1)).toEqual([]);
    const jobId = new RegExp(`^${jobIdSource(kSessionId, /(T\d+)/, 1)}$`);
    const jobsOfTask = new Map<string, string[]>();
    for (const id of adds.keys()) {
      const task = jobId.exec(id)?.[1] ?? `not a job id: ${id}`;
      jobsOfTask.set(task, [...(jobsOfTask.get(task) ?? []), id]);
    }
    expect([...jobsOfTask.entries()].filter(([, ids]) => ids.length !== 1)).toEqual([]);
    expect(jobsOfTask.size).toBe(kTasks);
    expect([...finalRuns.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    // The journal's finish entries name the job whose reply finished the task.
    expect(finishes.length).toBeGreaterThan(0);
    for (const entry of finishes) if (entry.type === 'finish') expect(entry.job).toMatch(new RegExp(`^${jobIdSource(kSessionId, entry.id, 1)}$`));
    // No job of the session is left waiting, running or finished.
    const client = new Redis(redis.url);
    try {
      expect(await client.llen(`bull:${kQueue}:wait`)).toBe(0);
      expect(await client.llen(`bull:${kQueue}:active`)).toBe(0);
      // Nor finished: every reply was read, and what no attempt awaited was removed at a run's start or end.
      expect(await client.zrange(`bull:${kQueue}:completed`, 0, -1)).toEqual([]);
      expect(await client.zrange(`bull:${kQueue}:failed`, 0, -1)).toEqual([]);
    } finally {
      client.disconnect();
    }
  });
});
