import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { kRunRedisTests, startRedis, type RedisServer } from './redis-server.js';
import { spawnCliWith, waitFor, type SpawnedCli, type SpawnOptions } from './spawn-cli.js';

/** Lines of a file that may not exist yet. */
export function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '') : [];
}

/**
 * A command that notes the pid of its shell in `<marks>/<id>.pids` and then waits for
 * `<marks>/release`, so that a test acts while the job is known to be running and can
 * look for the process afterwards.
 */
export function waitingCommand(marks: string): string {
  return `echo $$ >> ${marks}/{id}.pids; while [ ! -e ${marks}/release ]; do sleep 0.05; done; echo done-{id}`;
}

/**
 * A `csv-wave worker`, once it says it takes jobs. BullMQ's own stalled-job check (30 s):
 * a shorter one loses job locks on a loaded machine, and a job whose lock was lost runs again.
 */
export async function readyWorker(url: string, ...args: string[]): Promise<SpawnedCli> {
  return readyWorkerWith({}, url, ...args);
}

/** readyWorker with an environment of its own (spawnCliWith). */
export async function readyWorkerWith(options: SpawnOptions, url: string, ...args: string[]): Promise<SpawnedCli> {
  const worker = spawnCliWith(options, 'worker', '--redis', url, ...args);
  await waitFor(() => worker.stdoutSoFar().includes('taking jobs'), 'a ready worker');
  return worker;
}

/** The environment of a coordinator or worker run with `--insecure-no-secret`: without the tests' secret, which that flag refuses. */
export const kNoSecret: SpawnOptions = { env: { CSV_WAVE_SECRET: undefined } };

/**
 * For a test file whose tests share one Redis: call it once, at the top level, beside the
 * file's `describe.runIf(kRunRedisTests)` blocks. It starts a redis-server before their first
 * test and disposes of it after the last, after the afterAll hooks registered later (vitest
 * runs them in reverse), so those may still use it. Under CI a missing redis-server fails the
 * start, and so the tests, never skips them (kRunRedisTests); elsewhere without one it starts
 * nothing and the blocks are skipped. In a file with tests that need no Redis too, call it at
 * the top of the Redis block: it serves that block alone. Read its fields inside tests and hooks.
 */
export function redisForFile(): RedisServer {
  let server: RedisServer | undefined;
  const started = (): RedisServer => {
    if (!server) throw new Error('redisForFile: no redis-server yet; read it inside a test or a hook');
    return server;
  };
  if (kRunRedisTests) {
    beforeAll(async () => {
      server = await startRedis();
    });
    afterAll(async () => {
      await server?.dispose();
    });
  }
  return {
    get port() {
      return started().port;
    },
    get url() {
      return started().url;
    },
    get dir() {
      return started().dir;
    },
    stop: () => started().stop(),
    crash: () => started().crash(),
    restart: () => started().restart(),
    dispose: () => started().dispose(),
  };
}

/** What each test of a block gets from redisForEachTest. */
export interface EachTestRedis {
  /** A redis-server of the test's own. */
  redis: RedisServer;
  /** A fresh folder for waitingCommand's marks; its `release` is written after the test. */
  marks: string;
  /** Processes the test started: killed after it. */
  started: SpawnedCli[];
}

/**
 * For a describe block whose tests each need a Redis of their own: starts it and a marks
 * folder before each test; after it, releases the waiting commands, kills every process the
 * test put in `started`, and stops Redis. Read the fields inside the tests (set per test).
 */
export function redisForEachTest(): EachTestRedis {
  const each = { started: [] as SpawnedCli[] } as EachTestRedis;
  beforeEach(async () => {
    each.redis = await startRedis();
    each.marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
  });
  afterEach(async () => {
    writeFileSync(join(each.marks, 'release'), '');
    for (const spawned of each.started) spawned.child.kill('SIGKILL');
    each.started.length = 0;
    await each.redis?.dispose();
  });
  return each;
}

/**
 * A job id of the session's task and attempt, of any run (`<session>.r<run>.<task>.a<attempt>`,
 * names.ts), as RegExp source. A task or attempt given as a RegExp is a pattern of them, taken
 * as it is: `jobIdSource(session, /(T\d+)/, /\d+/)` matches any task T<n>, captured, at any attempt.
 */
export function jobIdSource(sessionId: string, task: string | RegExp, attempt: number | RegExp): string {
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const part = (value: string | number | RegExp) => (value instanceof RegExp ? value.source : escaped(String(value)));
  return `${escaped(sessionId)}\\.r[0-9a-f]{12}\\.${part(task)}\\.a${part(attempt)}`;
}

/** The first job id of the session's task and attempt in `text` (a worker's [JOB] lines); undefined when there is none. */
export function jobIdIn(text: string, sessionId: string, task: string, attempt: number): string | undefined {
  return new RegExp(jobIdSource(sessionId, task, attempt)).exec(text)?.[0];
}
