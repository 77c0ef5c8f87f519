import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { TasksWriter } from '../../src/session/tasks-writer.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

/** Task `slow` waits for the file `release`; the others finish at once. */
const kCmd =
  `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f release ]; do sleep 0.02; done; fi; ` +
  'echo "done $CSV_WAVE_TASK_ID"';

function session(): string {
  return buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode',
      '"a","A","first","r","","","csv-wave"',
      '"slow","Slow","waits for the test","r","","","csv-wave"',
      '"later","Later","runs in wave 2","r","a;slow","","csv-wave"',
      '',
    ].join('\n'),
    { session: JSON.stringify({ pipeline: 'generic' }) },
  );
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  await running.run.exited;
  running = undefined;
});

describe('tasks.csv touched during a run (new modification time, same content)', () => {
  it('is no edit: the run goes on to the end, exit 0', async () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const run = spawnCli('run', dir, '--cmd', kCmd);
    running = { run, dir };
    // Two task starts observed: wave 1 is under way and cannot end until slow is released.
    await waitFor(() => countRuns(dir).has('a') && countRuns(dir).has('slow'), 'a and slow to start');
    const before = statSync(tasksPath);
    // A real touch, a year ahead so that the new time differs whatever the clock's resolution.
    const future = new Date(Date.now() + 365 * 24 * 3600 * 1000);
    execFileSync('touch', ['-m', '-d', future.toISOString(), tasksPath]);
    expect(statSync(tasksPath).mtimeMs).not.toBe(before.mtimeMs);
    // Releasing slow ends wave 1: its checkpoint looks for an edit before wave 2 starts.
    writeFileSync(join(dir, 'release'), '');
    const finished = await run.exited;
    running = undefined;
    expect(finished.stderr).not.toMatch(/changed by someone else/);
    expect(finished.code).toBe(0);
    const rows = parseTasks(readFileSync(tasksPath, 'utf8')).rows;
    expect(rows.map((row) => [row.id, row.status])).toEqual([
      ['a', 'completed'],
      ['slow', 'completed'],
      ['later', 'completed'],
    ]);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1 });
  });
});

describe('TasksWriter edit detection by content', () => {
  it('takes a new modification time on the same bytes as no edit, and a same-size change as one', () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const { table, writer } = TasksWriter.read(tasksPath);
    const future = new Date(Date.now() + 3600 * 1000);
    utimesSync(tasksPath, future, future);
    expect(writer.editedByOthers()).toBe(false);

    table.rows[0]!.status = 'completed';
    expect(writer.write()).toBe(true);
    utimesSync(tasksPath, future, future);
    expect(writer.editedByOthers()).toBe(false);

    // The same size, other bytes: an edit, whatever the time says.
    const text = readFileSync(tasksPath, 'utf8');
    const edited = text.replace('"first"', '"FIRST"');
    expect(edited.length).toBe(text.length);
    writeFileSync(tasksPath, edited);
    expect(writer.editedByOthers()).toBe(true);
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe(edited);
  });
});
