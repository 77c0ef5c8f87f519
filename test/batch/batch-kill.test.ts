import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mulberry32 } from '../../scripts/gen-dag.js';
import { readJournal, replayJournal } from '../../src/session/journal.js';
import type { BatchRouteEvent } from '../helpers/model-server/batches.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { usageLinesOf } from '../helpers/usage-lines.js';
import { startBatchServer, type BatchTestServer } from './batch-server.js';

/** Replay a failure with CSV_WAVE_BATCH_KILL_SEED=<the seed in the test name>. */
const kSeed = Number(process.env['CSV_WAVE_BATCH_KILL_SEED'] ?? 22013);
const kWaves = 5;
const kPerWave = 12;
const kKills = 12;

/** Where a kill lands: after k batch creations or polls at the server, k journal entries, or k answers merged (usage lines). */
const kKillPoints = ['create', 'poll', 'journal', 'merge'] as const;
type KillPoint = (typeof kKillPoints)[number];

function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line !== '') : [];
}

/** kWaves waves of kPerWave tasks; each task after wave 1 depends on one task of the wave before. */
function session(random: () => number): { dir: string; ids: string[] } {
  const ids = Array.from({ length: kWaves * kPerWave }, (_, index) => `T${String(index + 1).padStart(2, '0')}`);
  const rows = ids.map((id, index) => {
    const wave = Math.floor(index / kPerWave);
    const dep = wave === 0 ? '' : ids[(wave - 1) * kPerWave + Math.floor(random() * kPerWave)]!;
    return { id, title: id, description: `Describe ${id}`, role: 'worker', deps: dep };
  });
  return { dir: buildSession(rows), ids };
}

/** The tasks whose results the session holds after a kill (tasks.csv with the journal applied, as resume reads them). */
function acceptedTasks(dir: string): Set<string> {
  const rows = [...readRows(dir).values()];
  replayJournal(rows, readJournal(dir));
  return new Set(rows.filter((row) => row.status === 'completed').map((row) => row.id));
}

/** Completed attempts by task, from attempts.ndjson (one line per attempt, never emptied). */
function completions(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines(join(dir, 'attempts.ndjson'))) {
    const attempt = JSON.parse(line) as { task: string; outcome: string };
    if (attempt.outcome === 'completed') counts.set(attempt.task, (counts.get(attempt.task) ?? 0) + 1);
  }
  return counts;
}

/** Journal entries written so far, across checkpoints (a checkpoint empties the file; what follows counts on). */
class JournalTap {
  #seen = 0;
  #total = 0;
  constructor(private readonly path: string) {}
  entries(): number {
    const now = lines(this.path).length;
    this.#total += now >= this.#seen ? now - this.#seen : now;
    this.#seen = now;
    return this.#total;
  }
}

describe('kill -9 loops of a --batch run', () => {
  let server: BatchTestServer;
  let child: SpawnedCli | undefined;
  /** Checked at each server event and each 20 ms: true once the current run is to be killed. */
  let due: () => boolean = () => false;
  const kill = () => {
    if (child && child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
  };

  beforeAll(async () => {
    server = await startBatchServer({
      // A kill after a server event lands once the server has answered, as a crash would (the kill comes from outside).
      onEvent: () => {
        if (due()) setImmediate(kill);
      },
    });
  });
  afterAll(async () => {
    kill();
    await child?.exited;
    await server?.close();
  });

  test(`${kKills} kills after a seeded number of batch creations, polls, journal entries or answers merged (seed ${kSeed}), then resume --batch: nothing sent twice, merged twice or leaked`, { timeout: 900_000 }, async () => {
    const random = mulberry32(kSeed);
    const { dir, ids } = session(random);
    const journal = new JournalTap(join(dir, '.csv-wave', 'journal.ndjson'));
    const count = (point: KillPoint): number => {
      const kind: BatchRouteEvent['kind'] = point === 'create' ? 'create' : 'retrieve';
      if (point === 'journal') return journal.entries();
      if (point === 'merge') return lines(join(dir, 'usage.ndjson')).length;
      return server.events.filter((event) => event.kind === kind).length;
    };
    const flags = ['--executor', 'openai', '--model', 'm', '--base-url', server.baseUrl, '--batch', '--batch-poll', '0.05'];
    const kills: { point: KillPoint; k: number; landed: boolean; inGap: number }[] = [];
    /** At each kill: the tasks the session held results of, and the completed attempts then. */
    const snapshots: { accepted: Set<string>; completed: Map<string, number> }[] = [];

    for (let index = 0; index < kKills; index++) {
      const point = kKillPoints[Math.floor(random() * kKillPoints.length)]!;
      const k = 1 + Math.floor(random() * (point === 'create' ? 2 : point === 'poll' ? 8 : 12));
      const from = count(point);
      const eventsBefore = server.events.length;
      due = () => count(point) >= from + k;
      child = spawnCli(index === 0 ? 'run' : 'resume', dir, ...flags);
      let exited = false;
      void child.exited.then(() => (exited = true));
      await waitFor(() => exited || due(), `${k} more ${point} events`);
      due = () => false;
      kill();
      const ended = await child.exited;
      // The batches this run created that its journal does not name by id and it never polled: the kill
      // came between the batch's creation and its entry (a resume finds them by their launch marker).
      const journalText = existsSync(join(dir, '.csv-wave', 'journal.ndjson')) ? readFileSync(join(dir, '.csv-wave', 'journal.ndjson'), 'utf8') : '';
      const events = server.events.slice(eventsBefore);
      const polled = new Set(events.flatMap((event) => (event.kind === 'retrieve' ? [event.batch] : [])));
      const inGap = events.filter((event) => event.kind === 'create' && !polled.has(event.batch) && !journalText.includes(`"${event.batch}"`)).length;
      kills.push({ point, k, landed: ended.signal === 'SIGKILL', inGap });
      snapshots.push({ accepted: acceptedTasks(dir), completed: completions(dir) });
    }
    due = () => false;
    child = spawnCli('resume', dir, ...flags);
    const last = await child.exited;

    // The figures (RELIABILITY.md "Attacks: batch kills, budgets, usage.ndjson").
    const created = server.events.flatMap((event) => (event.kind === 'create' ? [event] : []));
    const batchesOf = new Map<string, number>();
    for (const batch of created) for (const customId of batch.customIds) batchesOf.set(customId.split('/')[0]!, (batchesOf.get(customId.split('/')[0]!) ?? 0) + 1);
    const sentTwice = [...batchesOf].filter(([, n]) => n > 1).map(([id]) => id);
    const usageOf = new Map<string, number>();
    for (const line of usageLinesOf(dir)) usageOf.set(line.task, (usageOf.get(line.task) ?? 0) + 1);
    const usageTwice = [...usageOf].filter(([, n]) => n > 1).map(([id]) => id);
    // Finished twice: a task whose result the session held at a kill was finished again by a later run.
    const finishes = completions(dir);
    const finishedTwice = [...new Set(snapshots.flatMap(({ accepted, completed }) => [...accepted].filter((id) => finishes.get(id) !== completed.get(id))))].sort();
    const taken = new Set(server.events.flatMap((event) => (event.kind === 'retrieve' && event.status === 'completed') || event.kind === 'cancel' ? [event.batch] : []));
    const leaked = created.filter((batch) => !taken.has(batch.batch)).map((batch) => batch.batch);
    console.log(
      `batch kill loop seed ${kSeed}: ${kills.filter((kill) => kill.landed).length} kills landed of ${kKills} (${kKillPoints.map((point) => `${point} ${kills.filter((kill) => kill.point === point && kill.landed).length}`).join(', ')}), ` +
        `${kills.reduce((sum, kill) => sum + kill.inGap, 0)} kill(s) between a batch's creation and its journal entry; ${created.length} batches created, ${server.events.filter((event) => event.kind === 'upload').length} uploads; ` +
        `sent twice ${sentTwice.length}, usage twice ${usageTwice.length}, finished twice ${finishedTwice.length}, batches leaked ${leaked.length}`,
    );

    expect(last.code, last.stderr).toBe(0);
    const rows = readRows(dir);
    expect(rows.size).toBe(ids.length);
    for (const id of ids) expect(rows.get(id), id).toMatchObject({ status: 'completed', findings: `Answered ${id}` });
    expect({ sentTwice, usageTwice, finishedTwice, leaked }).toEqual({ sentTwice: [], usageTwice: [], finishedTwice: [], leaked: [] });
    // Every task's one request is in usage.ndjson once.
    expect([...usageOf.keys()].sort()).toEqual(ids);
  });
});
