import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/tasks-file.js';
import { readJournal, replayJournal } from '../../src/engine/journal.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { sleep, spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { tempSession } from '../helpers/temp-session.js';

const kSeed = 0x5eed_c0de;
const kWaves = 5;
const kTasksPerWave = 40;
const kKills = 5;
/** Every task records its execution, naps a few milliseconds (its `nap` cell), and reports. */
const kCmd = `${kLogRun}; sleep {nap}; echo "done $CSV_WAVE_TASK_ID"`;

/** mulberry32: a small seeded PRNG, so that a failure can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** 200 tasks in 5 waves; each task after wave 1 depends on 1 to 3 tasks of the wave before. */
function bigSession(random: () => number): { dir: string; ids: string[] } {
  const ids: string[] = [];
  const lines = ['id,title,description,role,deps,context_from,exec_mode,nap'];
  for (let wave = 0; wave < kWaves; wave++) {
    for (let i = 0; i < kTasksPerWave; i++) {
      const id = `t${String(wave * kTasksPerWave + i).padStart(3, '0')}`;
      const deps = new Set<string>();
      if (wave > 0) {
        const count = 1 + Math.floor(random() * 3);
        for (let d = 0; d < count; d++) deps.add(ids[(wave - 1) * kTasksPerWave + Math.floor(random() * kTasksPerWave)]!);
      }
      const nap = (Math.floor(random() * 7) * 0.02).toFixed(2);
      lines.push(`"${id}","Task ${id}","do ${id}","worker","${[...deps].join(';')}","","csv-wave","${nap}"`);
      ids.push(id);
    }
  }
  return { dir: tempSession(`${lines.join('\n')}\n`, { 'session.json': JSON.stringify({ pipeline: 'generic' }) }), ids };
}

/** Waits until the commands a killed run left behind (they outlive it) have all logged themselves. */
async function settle(dir: string): Promise<void> {
  const size = () => (existsSync(join(dir, 'runs.log')) ? statSync(join(dir, 'runs.log')).size : 0);
  await sleep(150);
  for (let last = -1; size() !== last; ) {
    last = size();
    await sleep(150);
  }
}

/** The session as the next run will see it: tasks.csv (which must parse) with the journal applied. */
function recoveredState(dir: string): { completed: Set<string>; inProgressInFile: Set<string>; inProgress: Set<string> } {
  const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
  const inProgressInFile = new Set(rows.filter((row) => row.status === 'in_progress').map((row) => row.id));
  replayJournal(rows, readJournal(dir));
  return {
    completed: new Set(rows.filter((row) => row.status === 'completed').map((row) => row.id)),
    inProgressInFile,
    inProgress: new Set(rows.filter((row) => row.status === 'in_progress').map((row) => row.id)),
  };
}

describe('kill -9 at random moments', () => {
  it(`loses no accepted result, keeps tasks.csv parseable and reruns only tasks in flight (seed ${kSeed})`, async () => {
    const random = prng(kSeed);
    const { dir, ids } = bigSession(random);
    /** For each task, the kills it was (or could have been) in flight for. */
    const inFlightKills = new Map<string, number>(ids.map((id) => [id, 0]));
    let runsBefore = new Map<string, number>();
    let completedBefore = new Set<string>();
    let kills = 0;
    let interruptedWork = 0;
    let lastRunKilled = false;

    for (let attempt = 1; attempt <= kKills; attempt++) {
      // Eager runs rewrite tasks.csv at each wave end while later tasks run, so that some
      // kills find tasks shown in_progress in the file too.
      const schedule = attempt % 2 === 0 ? 'eager' : 'waves';
      const run = spawnCli(attempt === 1 ? 'run' : 'resume', dir, '--cmd', kCmd, '--concurrency', '8', '--schedule', schedule);
      // Kill a random 100–800 ms after the run took the session (so that the kill lands in the
      // run, not in Node's start-up), or earlier if the run ends by itself.
      let ended = false;
      void run.exited.then(() => {
        ended = true;
      });
      await waitFor(() => ended || lockHolder(dir) === run.child.pid, 'the run to take the lock');
      await sleep(100 + Math.floor(random() * 700));
      const signalled = run.child.kill('SIGKILL');
      const exit = await run.exited;
      await settle(dir);

      const state = recoveredState(dir);
      const runs = countRuns(dir);
      // A result the journal or tasks.csv held before this run is never redone.
      for (const id of completedBefore) expect(runs.get(id), `${id} was done before run ${attempt}`).toBe(runsBefore.get(id));
      if (exit.signal === 'SIGKILL' && signalled) {
        kills++;
        lastRunKilled = true;
        for (const id of ids) {
          const startedInThisRun = (runs.get(id) ?? 0) > (runsBefore.get(id) ?? 0);
          const inFlight =
            (startedInThisRun && !state.completed.has(id)) || state.inProgress.has(id) || state.inProgressInFile.has(id);
          if (inFlight) {
            inFlightKills.set(id, inFlightKills.get(id)! + 1);
            interruptedWork++;
          }
        }
      } else {
        // The run ended before the kill: it must have finished everything.
        expect(exit.code, exit.stderr).toBe(0);
        lastRunKilled = false;
        break;
      }
      runsBefore = runs;
      completedBefore = state.completed;
    }

    // At least one kill cut a run short (otherwise this test proved nothing).
    expect(kills).toBeGreaterThan(0);
    expect(interruptedWork).toBeGreaterThan(0);

    let final = await spawnCli('resume', dir, '--cmd', kCmd, '--concurrency', '8').exited;
    expect(final.code, final.stderr).toBe(0);
    if (lastRunKilled) expect(final.stderr).toMatch(/stale lock/);

    const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
    expect(rows.map((row) => row.id)).toEqual(ids);
    for (const row of rows) {
      expect(row.status, row.id).toBe('completed');
      expect(row.findings, row.id).toBe(`done ${row.id}`);
    }
    expect(readJournal(dir)).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    // Temporary files of writes a kill cut short are cleaned up by the next run.
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const runs = countRuns(dir);
    for (const id of ids) {
      const executions = runs.get(id) ?? 0;
      expect(executions, id).toBeGreaterThanOrEqual(1);
      expect(executions, `${id} ran ${executions} times, in flight for ${inFlightKills.get(id)} of ${kills} kills`).toBeLessThanOrEqual(
        1 + inFlightKills.get(id)!,
      );
      expect(executions, id).toBeLessThanOrEqual(1 + kills);
    }
    expect([...runs.keys()].every((id) => inFlightKills.has(id))).toBe(true);

    // Nothing left to do: one more resume runs nothing.
    final = await spawnCli('resume', dir, '--cmd', kCmd).exited;
    expect(final.code).toBe(0);
    expect(countRuns(dir)).toEqual(runs);
  });
});

function lockHolder(dir: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, '.csv-wave', 'lock'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
}
