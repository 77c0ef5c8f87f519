import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { readJournal } from '../../src/session/journal.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCliWith, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

/** Kills the run with SIGKILL right before it writes tasks.csv over a save it merged (the journal has the merge). */
const kKillFixture = fileURLToPath(new URL('../fixtures/kill-before-merged-write.mjs', import.meta.url));
/** Task `slow` waits for the file `release`; the others finish at once. Each prints its id and description. */
const kCmd = `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f release ]; do sleep 0.02; done; fi; echo {id}: {description}`;

function rowsOf(text: string): Map<string, TaskRow> {
  return new Map(parseTasks(text).rows.map((row) => [row.id, row]));
}

let killed: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!killed) return;
  writeFileSync(join(killed.dir, 'release'), '');
  killed.run.child.kill('SIGKILL');
  await killed.run.exited;
  killed = undefined;
});

describe('kill -9 right after a save of tasks.csv was merged, before tasks.csv shows it', () => {
  it('resume loses nothing: the edits taken, the results the save did not show, no finished task run again', async () => {
    const dir = buildSession(
      [
        'id,title,description,role,deps,context_from,exec_mode',
        '"a","A","first","r","","","csv-wave"',
        '"slow","Slow","waits for the test","r","","","csv-wave"',
        '"later","Later","runs in wave 2","r","a","","csv-wave"',
        '"last","Last","runs in wave 3","r","later;slow","","csv-wave"',
        '"gone","Gone","deleted by the person","r","a","","csv-wave"',
        '',
      ].join('\n'),
    );
    const tasksPath = join(dir, 'tasks.csv');
    const run = spawnCliWith({ env: { NODE_OPTIONS: `--import ${kKillFixture}` } }, 'run', dir, '--cmd', kCmd);
    killed = { run, dir };
    await waitFor(() => {
      const rows = rowsOf(readFileSync(tasksPath, 'utf8'));
      return rows.get('a')?.status === 'completed' && rows.get('slow')?.status === 'in_progress';
    }, 'tasks.csv to show a done and slow running');

    // The person's save comes from a copy opened before a finished (a pending, no findings),
    // with their own edits: later reworded, a task added, gone deleted.
    const shown = readFileSync(tasksPath, 'utf8');
    const columns = parseTasks(shown).columns.length;
    const typed = ['new', 'New', 'added by the person', 'r', 'a', ...Array<string>(columns - 5).fill('')].map((cell) => `"${cell}"`).join(',');
    const saved = `${shown
      .replace('"completed","a: first"', '"pending",""')
      .replace('"runs in wave 2"', '"reworded by the person"')
      .split('\n')
      .filter((line) => !line.startsWith('"gone"') && line !== '')
      .join('\n')}\n${typed}\n`;
    expect(saved).not.toBe(shown);
    writeFileSync(tasksPath, saved);

    const exited = await run.exited;
    killed = undefined;
    expect(exited.signal).toBe('SIGKILL');
    // The kill came after the merge was journaled, before tasks.csv was written again.
    expect(readFileSync(tasksPath, 'utf8')).toBe(saved);
    const journal = readJournal(dir);
    expect(journal).toContainEqual({ type: 'restore', id: 'a', cells: { status: 'completed', findings: 'a: first' } });
    expect(journal).toContainEqual({ type: 'remove', id: 'gone' });
    expect(journal).toContainEqual({ type: 'update', id: 'later', cells: { description: 'reworded by the person' } });
    expect(journal).toContainEqual(expect.objectContaining({ type: 'add', row: expect.objectContaining({ id: 'new', status: 'pending' }) }));

    writeFileSync(join(dir, 'release'), '');
    const resumed = await runCli('resume', dir, '--cmd', kCmd);
    expect(resumed.code).toBe(0);
    const final = rowsOf(readFileSync(tasksPath, 'utf8'));
    expect([...final.keys()]).toEqual(['a', 'slow', 'later', 'last', 'new']);
    expect(final.get('a')).toMatchObject({ status: 'completed', findings: 'a: first' });
    expect(final.get('later')).toMatchObject({ status: 'completed', findings: 'later: reworded by the person' });
    expect(final.get('new')).toMatchObject({ status: 'completed', findings: 'new: added by the person' });
    expect([...final.values()].every((row) => row.status === 'completed')).toBe(true);
    // a finished before the kill: it does not run again. slow was running: it does (in flight).
    const runs = Object.fromEntries(countRuns(dir));
    expect(runs).toEqual({ a: 1, slow: 2, later: 1, last: 1, new: 1 });
    expect(readJournal(dir)).toEqual([]);
  });
});
