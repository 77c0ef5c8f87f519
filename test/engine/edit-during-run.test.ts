import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { RunEmitter } from '../../src/events/events.js';
import { readJournal } from '../../src/session/journal.js';
import { runSession } from '../../src/run/run-session.js';
import { TasksWriter } from '../../src/session/tasks-writer.js';
import { statusOf } from '../../src/core/skip-cause.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

const kSessionJson = JSON.stringify({ pipeline: 'generic', discovery_files: 'always' });
/** Task `slow` waits for the file `release`; the others finish at once. */
const kCmd =
  `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f release ]; do sleep 0.02; done; fi; ` +
  'echo "done $CSV_WAVE_TASK_ID"';

function session(): string {
  return buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode',
      '"a","A","first","r","","","csv-wave"',
      '"b","B","second","r","","","csv-wave"',
      '"slow","Slow","waits for the test","r","","","csv-wave"',
      '"later","Later","runs in wave 2","r","a","","csv-wave"',
      '"last","Last","runs in wave 3","r","later;slow","","csv-wave"',
      '',
    ].join('\n'),
    { session: kSessionJson },
  );
}

function rowsOf(text: string): Map<string, TaskRow> {
  return new Map(parseTasks(text).rows.map((row) => [row.id, row]));
}

/** True once tasks.csv shows a and b completed and slow in progress: only the timer writes during wave 1. */
function shownWhileSlowRuns(tasksPath: string): boolean {
  const rows = rowsOf(readFileSync(tasksPath, 'utf8'));
  return rows.get('a')!.status === 'completed' && rows.get('b')!.status === 'completed' && rows.get('slow')!.status === 'in_progress';
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  await running.run.exited;
  running = undefined;
});

describe('a person edits tasks.csv during a run', () => {
  it('is never overwritten: the run stops with exit 3, and resume applies the journal to the edit', async () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const run = spawnCli('run', dir, '--cmd', kCmd, '--concurrency', '4');
    running = { run, dir };

    // a and b are done and slow is running: wave 1 cannot end until the test releases slow.
    await waitFor(() => {
      const runs = countRuns(dir);
      return runs.has('a') && runs.has('b') && runs.has('slow') && existsSync(join(dir, 'discoveries', 'b.json'));
    }, 'wave 1 to be under way');
    // The run's timer shows a and b in tasks.csv while wave 1 still runs (slow holds it).
    await waitFor(() => shownWhileSlowRuns(tasksPath), 'the timer to show a and b in tasks.csv');

    // The person's edit: retitle a pending task, save in place as an editor does.
    const shown = readFileSync(tasksPath, 'utf8');
    expect(statusOf(rowsOf(shown).get('later')!)).toBe('pending');
    const edited = shown.replace('"Later"', '"Later, retitled by a person"');
    expect(edited).not.toBe(shown);
    writeFileSync(tasksPath, edited);
    const editedBytes = readFileSync(tasksPath);

    // The edit is noticed by the timer or at the wave end (the next test proves the
    // timer); either way the run stops when slow finishes.
    writeFileSync(join(dir, 'release'), '');
    const stopped = await run.exited;
    running = undefined;

    expect(stopped.code).toBe(3);
    expect(stopped.stdout + stopped.stderr).toMatch(/changed by someone else/);
    expect(stopped.stdout + stopped.stderr).toContain(`csv-wave resume ${dir}`);
    expect(readFileSync(tasksPath)).toEqual(editedBytes);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);

    // Every task that finished is either shown in the saved file or kept in the journal.
    const journaled = new Map(
      readJournal(dir).flatMap((entry) => (entry.type === 'finish' ? [[entry.id, entry] as const] : [])),
    );
    expect(journaled.get('slow')).toMatchObject({ status: 'completed', findings: 'done slow' });
    const saved = rowsOf(edited);
    for (const id of ['a', 'b', 'slow']) {
      const inFile = saved.get(id)!.status === 'completed';
      expect(inFile || journaled.get(id)?.status === 'completed', `result of ${id}`).toBe(true);
    }
    // Nothing started after the edit was noticed.
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, slow: 1 });

    const resumed = await runCli('resume', dir, '--cmd', kCmd);
    expect(resumed.code).toBe(0);
    const final = rowsOf(readFileSync(tasksPath, 'utf8'));
    expect(final.get('later')!.title).toBe('Later, retitled by a person');
    for (const [id, row] of final) {
      expect(row.status, id).toBe('completed');
      expect(row.findings, id).toBe(`done ${id}`);
    }
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, slow: 1, later: 1, last: 1 });
    expect(readJournal(dir)).toEqual([]);
  });

  it('the timer notices an edit while a task runs, before the wave ends, and writes nothing over it', async () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    // Every rewrite attempt of tasks.csv, with its outcome: false is a rewrite refused over an edit.
    const writes = vi.spyOn(TasksWriter.prototype, 'write');
    try {
      const finished = runSession(dir, { executor: { type: 'command', template: kCmd }, concurrency: 4 });
      await waitFor(() => shownWhileSlowRuns(tasksPath), 'the timer to show a and b in tasks.csv');
      const edited = readFileSync(tasksPath, 'utf8').replace('"Later"', '"Later, retitled by a person"');
      writeFileSync(tasksPath, edited);
      // slow has not been released, so wave 1 has not ended: only the timer can try a rewrite now.
      await waitFor(
        () => writes.mock.results.some((result) => result.type === 'return' && result.value === false),
        'the timer to find the edit',
      );
      expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
      writeFileSync(join(dir, 'release'), '');
      const summary = await finished;
      expect(summary.stopped).toBe('edited');
      expect(summary.exitCode).toBe(3);
      expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
      expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, slow: 1 });
    } finally {
      writeFileSync(join(dir, 'release'), '');
      writes.mockRestore();
    }
  });

  it('an edit that keeps the file size is noticed at the wave end, before the next wave starts', async () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const run = spawnCli('run', dir, '--cmd', kCmd);
    running = { run, dir };
    await waitFor(() => countRuns(dir).has('slow'), 'slow to start');
    // The person changes a description without changing the file's size.
    const text = readFileSync(tasksPath, 'utf8');
    const edited = text.replace('"waits for the test"', '"WAITS for the test"');
    expect(edited.length).toBe(text.length);
    writeFileSync(tasksPath, edited);
    // Releasing slow ends wave 1; the checkpoint at the wave end notices the edit before wave 2 starts.
    writeFileSync(join(dir, 'release'), '');
    const stopped = await run.exited;
    running = undefined;
    expect(stopped.code).toBe(3);
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
    expect(countRuns(dir).has('later')).toBe(false);

    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    const final = rowsOf(readFileSync(tasksPath, 'utf8'));
    expect(final.get('slow')!.description).toBe('WAITS for the test');
    expect([...final.values()].every((row) => row.status === 'completed')).toBe(true);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, slow: 1, later: 1, last: 1 });
  });
});

describe('TasksWriter', () => {
  it('refuses to replace a file saved between its read and its first write', () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const { table, writer } = TasksWriter.read(tasksPath);
    const edited = readFileSync(tasksPath, 'utf8').replace('"first"', '"first, edited"');
    writeFileSync(tasksPath, edited);
    table.rows[0]!.status = 'completed';
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('rewrites its own file as often as asked, and stops at the first edit by someone else', () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const { table, writer } = TasksWriter.read(tasksPath);
    table.rows[0]!.status = 'in_progress';
    expect(writer.write()).toBe(true);
    table.rows[0]!.status = 'completed';
    expect(writer.write()).toBe(true);
    expect(rowsOf(readFileSync(tasksPath, 'utf8')).get('a')!.status).toBe('completed');
    const edited = readFileSync(tasksPath, 'utf8').replace('"Later"', '"LATER"');
    writeFileSync(tasksPath, edited);
    expect(writer.editedByOthers()).toBe(true);
    table.rows[1]!.status = 'completed';
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
  });

  it('a run stops with TASKS_EDITED (exit 3) before running anything when tasks.csv changes while it is read', async () => {
    // The person's save lands right after the run identified the file: simulated by a
    // prepare hook, which runs between the read and the first write.
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const edited = readFileSync(tasksPath, 'utf8').replace('"first"', '"first, edited"');
    await expect(
      runSession(dir, {
        executor: { type: 'command', template: kCmd },
        prepare: () => writeFileSync(tasksPath, edited),
      }),
    ).rejects.toMatchObject({ code: 'TASKS_EDITED' });
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
    expect(countRuns(dir).size).toBe(0);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
  });
});

describe('an edit saved after the last rewrite of a run', () => {
  it('ends the run with TASKS_EDITED exit code 3, not as if tasks.csv showed everything', async () => {
    const dir = session();
    writeFileSync(join(dir, 'release'), '');
    const tasksPath = join(dir, 'tasks.csv');
    const events = new RunEmitter();
    let edited = '';
    // After the checkpoint of the last wave end, before the run's final rewrite, which comes
    // after the backend is closed: a wave:done listener added once the run has started runs
    // after the checkpointer's, in the same turn (no wait on the event loop's phases).
    events.once('task:start', () => {
      events.on('wave:done', ({ wave }) => {
        if (wave !== 3) return;
        edited = readFileSync(tasksPath, 'utf8').replace('"Last"', '"Last, seen by a person"');
        writeFileSync(tasksPath, edited);
      });
    });
    const summary = await runSession(dir, { executor: { type: 'command', template: kCmd }, events });
    expect(summary.stopped).toBe('edited');
    expect(summary.exitCode).toBe(3);
    expect(summary.reason).toMatch(/changed by someone else/);
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);

    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    const final = rowsOf(readFileSync(tasksPath, 'utf8'));
    expect(final.get('last')).toMatchObject({ title: 'Last, seen by a person', status: 'completed' });
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, slow: 1, later: 1, last: 1 });
  });
});
