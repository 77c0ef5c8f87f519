import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import type { BatchEnding } from '../helpers/model-server/batches.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { deferred, kFirstUsage, startBatchServer, type BatchTestServer } from './batch-server.js';

let server: BatchTestServer | undefined;
let child: SpawnedCli | undefined;

afterEach(async () => {
  if (child && child.child.exitCode === null && child.child.signalCode === null) {
    child.child.kill('SIGKILL');
    await child.exited;
  }
  child = undefined;
  await server?.close();
  server = undefined;
});

/** Three tasks in wave 1, one in wave 2. */
function session(): string {
  return buildSession([
    { id: 'A', title: 'A', description: 'Describe A', role: 'worker' },
    { id: 'B', title: 'B', description: 'Describe B', role: 'worker' },
    { id: 'C', title: 'C', description: 'Describe C', role: 'worker' },
    { id: 'D', title: 'D', description: 'Sum up', role: 'worker', deps: 'A;B;C', context_from: 'A;B;C' },
  ]);
}

/** The server holds the first batch (wave 1) until the test releases it; later ones complete at once. */
async function heldServer() {
  const first = deferred<BatchEnding>();
  let batches = 0;
  server = await startBatchServer({ hold: () => (++batches === 1 ? first.promise : Promise.resolve('complete')) });
  return first;
}

const flags = () => ['--executor', 'openai', '--model', 'm', '--base-url', server!.baseUrl, '--batch', '--batch-poll', '0.05'];

/** Polls of a batch the server answered with this status so far. */
function polls(batch: string, status = 'in_progress'): number {
  return server!.events.filter((event) => event.kind === 'retrieve' && event.batch === batch && event.status === status).length;
}

function waveOneBatch(): string {
  const created = server!.created();
  expect(created[0]?.customIds).toEqual(['A/a1/r1', 'B/a1/r1', 'C/a1/r1']);
  return created[0]!.batch;
}

/** Resumes in this process; releases the held batch once the resumed run polled it (it re-attached), then waits for the end. */
async function resumeAndRelease(dir: string, release: () => void, batch: string, ...extra: string[]) {
  const before = polls(batch);
  const resumed = runCli('resume', dir, ...flags(), ...extra);
  await waitFor(() => polls(batch) > before, 'the resumed run to poll the batch');
  release();
  return resumed;
}

function expectAllMergedOnce(dir: string): void {
  expect([...readRows(dir).values()].map((row) => `${row.id} ${row.status} ${row.findings}`)).toEqual([
    'A completed Answered A',
    'B completed Answered B',
    'C completed Answered C',
    'D completed Answered D',
  ]);
  const usage = readFileSync(join(dir, 'usage.ndjson'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { task: string });
  expect(usage.map((line) => line.task).sort()).toEqual(['A', 'B', 'C', 'D']);
  for (const line of usage) expect(line).toMatchObject(kFirstUsage);
}

describe('a batch outlives its coordinator', () => {
  test('kill -9 while the batch is in progress, then resume: it re-attaches, sends nothing twice, merges every result once', async () => {
    const first = await heldServer();
    const dir = session();
    child = spawnCli('run', dir, ...flags());
    await waitFor(() => server!.created().length === 1 && polls(server!.created()[0]!.batch) >= 2, 'the coordinator to poll its batch');
    const batch = waveOneBatch();
    // The batch was journaled before it was first polled; it stays there however many checkpoints pass.
    expect(readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8')).toContain(`"batch":"${batch}"`);
    child.child.kill('SIGKILL');
    await child.exited;

    const resumed = await resumeAndRelease(dir, () => first.resolve('complete'), batch);
    expect(resumed.code, resumed.stderr).toBe(0);
    // One file and one batch per task set: wave 1's tasks went out once, before the kill.
    expect(server!.created().map((created) => created.customIds)).toEqual([['A/a1/r1', 'B/a1/r1', 'C/a1/r1'], ['D/a1/r1']]);
    expect(server!.events.filter((event) => event.kind === 'upload')).toHaveLength(2);
    expectAllMergedOnce(dir);
    // The batch is ended in the journal: a further resume has nothing to re-attach to.
    expect(readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8')).not.toContain(batch);
  });

  test('kill -9 between the server creating the batch and the journal naming it: resume finds it by its marker, sends nothing twice, leaves no batch behind', async () => {
    // The kill comes as the server has created the batch, before its answer leaves: the coordinator never hears of it.
    server = await startBatchServer({
      onEvent: (event) => {
        if (event.kind === 'create' && server!.created().length === 1) child?.child.kill('SIGKILL');
      },
    });
    const dir = session();
    child = spawnCli('run', dir, ...flags());
    const killed = await child.exited;
    expect(killed.signal).toBe('SIGKILL');
    const batch = waveOneBatch();
    expect(polls(batch, 'validating') + polls(batch)).toBe(0);

    const resumed = await runCli('resume', dir, ...flags());
    expect(resumed.code, resumed.stderr).toBe(0);
    // Wave 1 went out once: the resume took the batch the killed run made, found by the marker in its metadata.
    expect(server.created().map((created) => created.customIds)).toEqual([['A/a1/r1', 'B/a1/r1', 'C/a1/r1'], ['D/a1/r1']]);
    expect(server.events.filter((event) => event.kind === 'upload')).toHaveLength(2);
    expect(polls(batch, 'completed')).toBeGreaterThan(0);
    expectAllMergedOnce(dir);
    // Nothing open is left in the journal: neither the batch nor its launch.
    expect(readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8')).not.toMatch(new RegExp(`${batch}|batch-launch`));
  });

  test('a revise between the kill and the resume keeps the open batch: the resume still re-attaches to it', async () => {
    const first = await heldServer();
    const dir = session();
    child = spawnCli('run', dir, ...flags());
    await waitFor(() => server!.created().length === 1 && polls(server!.created()[0]!.batch) >= 1, 'the coordinator to poll its batch');
    const batch = waveOneBatch();
    child.child.kill('SIGKILL');
    await child.exited;
    // revise rewrites tasks.csv and empties the journal: the open batch must outlive that too.
    const revised = await runCli('revise', dir, 'D', '--feedback', 'Shorter, please');
    expect(revised.code, revised.stderr).toBe(0);
    const resumed = await resumeAndRelease(dir, () => first.resolve('complete'), batch);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(server!.created()[0]!.customIds).toEqual(['A/a1/r1', 'B/a1/r1', 'C/a1/r1']);
    expect(server!.created().slice(1).flatMap((created) => created.customIds).filter((id) => /^[ABC]\//.test(id))).toEqual([]);
  });

  test('Ctrl-C leaves the batch running and its tasks pending; a resume re-attaches to it', async () => {
    const first = await heldServer();
    const dir = session();
    child = spawnCli('run', dir, ...flags(), '--grace', '0');
    await waitFor(() => server!.created().length === 1 && polls(server!.created()[0]!.batch) >= 1, 'the coordinator to poll its batch');
    const batch = waveOneBatch();
    child.child.kill('SIGINT');
    const stopped = await child.exited;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(server!.events.some((event) => event.kind === 'cancel')).toBe(false);
    // Taken back: pending again (D never started: its cell stays empty, which is pending too).
    expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['pending', 'pending', 'pending', 'pending']);

    const resumed = await resumeAndRelease(dir, () => first.resolve('complete'), batch);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(server!.created().map((created) => created.customIds)).toEqual([['A/a1/r1', 'B/a1/r1', 'C/a1/r1'], ['D/a1/r1']]);
    expectAllMergedOnce(dir);
  });

  test('Ctrl-C with --cancel-batch cancels the batch; a resume sends the tasks in a new one', async () => {
    await heldServer();
    const dir = session();
    child = spawnCli('run', dir, ...flags(), '--grace', '0', '--cancel-batch');
    await waitFor(() => server!.created().length === 1 && polls(server!.created()[0]!.batch) >= 1, 'the coordinator to poll its batch');
    const batch = waveOneBatch();
    child.child.kill('SIGINT');
    const stopped = await child.exited;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(server!.events.filter((event) => event.kind === 'cancel').map((event) => event.kind === 'cancel' && event.batch)).toEqual([batch]);
    // Taken back: pending again (D never started: its cell stays empty, which is pending too).
    expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    expect(readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8')).not.toContain(`"batch":"${batch}"`);

    const resumed = await runCli('resume', dir, ...flags());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(server!.created().map((created) => created.customIds)).toEqual([
      ['A/a1/r1', 'B/a1/r1', 'C/a1/r1'],
      ['A/a1/r1', 'B/a1/r1', 'C/a1/r1'],
      ['D/a1/r1'],
    ]);
    expectAllMergedOnce(dir);
  });
});
