import { requiredColumns } from '../../src/pipelines/pipeline-columns.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { RunEmitter } from '../../src/events/events.js';
import { readJournal } from '../../src/session/journal.js';
import { runSession } from '../../src/run/run-session.js';
import { TasksWriter } from '../../src/session/tasks-writer.js';
import type { WriteFn } from '../../src/files/write-all.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

const kSessionJson = JSON.stringify({ pipeline: 'generic', discovery_files: 'always' });
/** Task `slow` waits for the file `release`; the others finish at once. Each prints its id and description. */
const kCmd = `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f release ]; do sleep 0.02; done; fi; echo {id}: {description}`;

function session(): string {
  return buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode',
      '"a","A","first","r","","","csv-wave"',
      '"slow","Slow","waits for the test","r","","","csv-wave"',
      '"later","Later","runs in wave 2","r","a","","csv-wave"',
      '"last","Last","runs in wave 3","r","later;slow","","csv-wave"',
      '"gone","Gone","runs in wave 2 unless deleted","r","a","","csv-wave"',
      '',
    ].join('\n'),
    { session: kSessionJson },
  );
}

function rowsOf(text: string): Map<string, TaskRow> {
  return new Map(parseTasks(text).rows.map((row) => [row.id, row]));
}

/** tasks.csv as the run names it in messages: the test's folder is outside the CLI's working folder, so its absolute path. */
function shownPath(dir: string): string {
  return join(dir, 'tasks.csv');
}

function tasksText(dir: string): string {
  return readFileSync(join(dir, 'tasks.csv'), 'utf8');
}

/** A row as a person types it in a spreadsheet: its first cells, the rest of the file's columns empty. */
function typedRow(text: string, cells: string[]): string {
  const columns = parseTasks(text).columns.length;
  return [...cells, ...Array<string>(columns - cells.length).fill('')].map((cell) => `"${cell}"`).join(',');
}

/** Saves tasks.csv in place, as an editor does, with `change` made to what the run last wrote. */
function save(dir: string, change: (text: string) => string): string {
  const edited = change(tasksText(dir));
  writeFileSync(join(dir, 'tasks.csv'), edited);
  return edited;
}

/** True once tasks.csv shows a completed and slow in progress: the run's timer wrote it during wave 1. */
function shownWhileSlowRuns(dir: string): boolean {
  const rows = rowsOf(tasksText(dir));
  return rows.get('a')?.status === 'completed' && rows.get('slow')?.status === 'in_progress';
}

/** How many whole `[EDIT]` lines the run printed: one per save it merged. */
function editLines(run: SpawnedCli): number {
  return run.stdoutSoFar().match(/^\[EDIT\] .*\n/gm)?.length ?? 0;
}

/** Waits for a warning on stderr: it comes by another pipe than the `[EDIT]` line, and may reach the test after it. */
async function warned(run: SpawnedCli, text: string): Promise<void> {
  await waitFor(() => run.stderrSoFar().includes(`warning: ${text}\n`), `the warning: ${text}`);
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  await running.run.exited;
  running = undefined;
});

/** Starts a run and waits until wave 1 is under way and shown: a done, slow held by the test. */
async function startHeld(dir: string, ...flags: string[]): Promise<SpawnedCli> {
  const run = spawnCli('run', dir, '--cmd', kCmd, ...flags);
  running = { run, dir };
  await waitFor(() => shownWhileSlowRuns(dir), 'the run to show a done and slow running in tasks.csv');
  return run;
}

async function release(dir: string, run: SpawnedCli): Promise<{ code: number | null; stdout: string; stderr: string }> {
  writeFileSync(join(dir, 'release'), '');
  const exited = await run.exited;
  running = undefined;
  return exited;
}

describe('a person saves tasks.csv during a run: the run merges the save and goes on', () => {
  it('takes a pending task\'s new description, a new row and a deleted pending row: the task runs with it, the new one runs, the deleted one does not', async () => {
    const dir = session();
    const run = await startHeld(dir);
    save(dir, (text) =>
      [
        ...text
          .replace('"runs in wave 2"', '"runs in wave 2, as the person reworded it"')
          .split('\n')
          .filter((line) => !line.startsWith('"gone"') && line !== ''),
        typedRow(text, ['new', 'New', 'added by a person', 'r', 'a']),
        '',
      ].join('\n'),
    );
    await waitFor(() => editLines(run) === 1, 'the run to merge the save');
    // A person watching sees their edit kept: tasks.csv is rewritten with it, the new row pending.
    await waitFor(() => rowsOf(tasksText(dir)).get('new')?.status === 'pending', 'tasks.csv to show the merged save');
    const shown = rowsOf(tasksText(dir));
    expect(shown.get('later')!.description).toBe('runs in wave 2, as the person reworded it');
    expect(shown.get('new')).toMatchObject({ status: 'pending', wave: '2' });
    expect(shown.has('gone')).toBe(false);
    expect(run.stdoutSoFar()).toContain(`[EDIT] ${shownPath(dir)} saved during the run: changed later; added new; removed gone\n`);

    const exited = await release(dir, run);
    expect(exited.code).toBe(0);
    expect(exited.stderr).toBe('');
    const final = rowsOf(tasksText(dir));
    expect(final.get('later')).toMatchObject({ status: 'completed', findings: 'later: runs in wave 2, as the person reworded it' });
    expect(final.get('new')).toMatchObject({ status: 'completed', findings: 'new: added by a person' });
    expect([...final.keys()]).toEqual(['a', 'slow', 'later', 'last', 'new']);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1, new: 1, last: 1 });
    expect(readJournal(dir)).toEqual([]);
  });

  it('a change that breaks a rule is said at its line and waits; the run goes on with the old values until a fixed save', async () => {
    const dir = session();
    const run = await startHeld(dir);
    save(dir, (text) => text.replace('"later","Later","runs in wave 2","r","a"', '"later","Later","runs in wave 2","r","a;nope"'));
    await waitFor(() => editLines(run) === 1, 'the run to merge the save');
    await warned(run, `${shownPath(dir)}:4: Unknown dependency: nope (this change waits until it is fixed; the run goes on with the old values)`);
    // tasks.csv is rewritten with the old deps.
    await waitFor(() => rowsOf(tasksText(dir)).get('later')?.deps === 'a', 'tasks.csv to show the old deps again');

    // Fixed, and reworded: taken.
    save(dir, (text) => text.replace('"later","Later","runs in wave 2","r","a"', '"later","Later","fixed and reworded","r","a"'));
    await waitFor(() => editLines(run) === 2, 'the run to merge the fixed save');
    expect(run.stdoutSoFar()).toContain(`[EDIT] ${shownPath(dir)} saved during the run: changed later\n`);

    const exited = await release(dir, run);
    expect(exited.code).toBe(0);
    expect(rowsOf(tasksText(dir)).get('later')).toMatchObject({ deps: 'a', status: 'completed', findings: 'later: fixed and reworded' });
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1, gone: 1, last: 1 });
  });

  it('cells the run owns are put back and said: a finished task\'s findings, a running task deleted', async () => {
    const dir = session();
    const run = await startHeld(dir);
    save(dir, (text) =>
      text
        .replace('"a: first"', '"my own words"')
        .split('\n')
        .filter((line) => !line.startsWith('"slow"'))
        .join('\n'),
    );
    await waitFor(() => editLines(run) === 1, 'the run to merge the save');
    await waitFor(() => rowsOf(tasksText(dir)).has('slow'), 'tasks.csv to show slow again');
    await warned(run, `${shownPath(dir)}:2 a: findings restored (a finished task keeps its results; \`csv-wave rerun ${dir} --task a\` runs it again)`);
    await warned(run, `${shownPath(dir)}:3 slow: deleted, restored (a run owns it while it runs)`);
    const shown = rowsOf(tasksText(dir));
    expect(shown.get('a')!.findings).toBe('a: first');
    expect(shown.get('slow')!.status).toBe('in_progress');
    expect([...shown.keys()]).toEqual(['a', 'slow', 'later', 'last', 'gone']);

    const exited = await release(dir, run);
    expect(exited.code).toBe(0);
    const final = rowsOf(tasksText(dir));
    expect([...final.values()].every((row) => row.status === 'completed')).toBe(true);
    expect(final.get('a')!.findings).toBe('a: first');
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1, gone: 1, last: 1 });
  });

  it('a save csv-wave cannot read stops the run with exit 3 and nothing written over it; once fixed, resume goes on', async () => {
    const dir = session();
    const run = await startHeld(dir);
    const good = tasksText(dir);
    // An unclosed quote: the file no longer parses.
    const broken = save(dir, (text) => text.replace('"later","Later"', '"later,"Later"'));
    await warned(
      run,
      `${shownPath(dir)} was saved in a form csv-wave cannot merge (CSV parse error: unexpected "L" after the closing quote of field 1 (id): double the quotes inside a quoted field): no new task starts, and nothing is written over it`,
    );

    const exited = await release(dir, run);
    expect(exited.code).toBe(3);
    const said = exited.stdout + exited.stderr;
    expect(said).toContain(`${shownPath(dir)}:4: CSV parse error: `);
    expect(said).toContain('Fix the file');
    expect(said).toContain(`csv-wave resume ${dir}`);
    expect(tasksText(dir)).toBe(broken);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    expect(readJournal(dir)).toContainEqual(expect.objectContaining({ type: 'finish', id: 'slow', findings: 'slow: waits for the test' }));
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1 });

    writeFileSync(join(dir, 'tasks.csv'), good);
    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    const final = rowsOf(tasksText(dir));
    expect(final.get('slow')!.findings).toBe('slow: waits for the test');
    expect([...final.values()].every((row) => row.status === 'completed')).toBe(true);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1, gone: 1, last: 1 });
  });
});

describe('--schedule waves: taken edits apply from the next wave', () => {
  /** slow and q in wave 1 (one slot: q waits behind slow), w2 in wave 2. */
  function waveSession(): string {
    return buildSession(
      [
        'id,title,description,role,deps,context_from,exec_mode',
        '"slow","Slow","waits for the test","r","","","csv-wave"',
        '"q","Q","queued in wave 1","r","","","csv-wave"',
        '"w2","W2","runs in wave 2","r","slow","","csv-wave"',
        '',
      ].join('\n'),
      { session: kSessionJson },
    );
  }

  /** The person's save: q and w2 reworded, and a task n that waits on nothing. */
  function saveEdits(dir: string): void {
    save(dir, (text) =>
      [
        ...text
          .replace('"queued in wave 1"', '"q reworded"')
          .replace('"runs in wave 2"', '"w2 reworded"')
          .split('\n')
          .filter((line) => line !== ''),
        typedRow(text, ['n', 'N', 'waits on nothing', 'r']),
        '',
      ].join('\n'),
    );
  }

  it('waves: a task of the running wave keeps its inputs even before it starts; a later wave\'s task and a new task go from the next wave', async () => {
    const dir = waveSession();
    const run = spawnCli('run', dir, '--cmd', kCmd, '--concurrency', '1');
    running = { run, dir };
    await waitFor(() => rowsOf(tasksText(dir)).get('slow')?.status === 'in_progress', 'slow to be shown running');
    saveEdits(dir);
    await waitFor(() => editLines(run) === 1, 'the run to merge the save');
    await warned(run, `${shownPath(dir)}:3 q: description restored (its wave is running: with --schedule waves a task keeps the inputs its wave started with)`);
    expect(run.stdoutSoFar()).toContain(`[EDIT] ${shownPath(dir)} saved during the run: changed w2; added n (1 warning(s) on what the run kept)\n`);
    // n waits on nothing, yet it goes to wave 2: wave 1 is running.
    await waitFor(() => rowsOf(tasksText(dir)).get('n')?.status === 'pending', 'tasks.csv to show the merged save');
    expect(rowsOf(tasksText(dir)).get('n')).toMatchObject({ wave: '2', status: 'pending' });
    expect(rowsOf(tasksText(dir)).get('q')!.description).toBe('queued in wave 1');

    const exited = await release(dir, run);
    expect(exited.code).toBe(0);
    const final = rowsOf(tasksText(dir));
    expect(final.get('q')!.findings).toBe('q: queued in wave 1');
    expect(final.get('w2')!.findings).toBe('w2: w2 reworded');
    expect(final.get('n')).toMatchObject({ wave: '2', findings: 'n: waits on nothing' });
    const order = readFileSync(join(dir, 'runs.log'), 'utf8').trim().split('\n');
    expect(order.slice(0, 2)).toEqual(['slow', 'q']);
    expect(order.slice(2).sort()).toEqual(['n', 'w2']);
    // wave-1.csv is what wave 1 ran with.
    expect(readFileSync(join(dir, 'wave-1.csv'), 'utf8')).toContain('"queued in wave 1"');
  });

  it('eager: every task that did not start takes the edit, and a new task that waits on nothing starts at once', async () => {
    const dir = waveSession();
    const run = spawnCli('run', dir, '--cmd', kCmd, '--concurrency', '2', '--schedule', 'eager');
    running = { run, dir };
    await waitFor(() => rowsOf(tasksText(dir)).get('q')?.status === 'completed' && countRuns(dir).has('slow'), 'q done and slow running');
    // q finished before the save: its description is a note now; w2 waits on slow.
    saveEdits(dir);
    await waitFor(() => editLines(run) === 1, 'the run to merge the save');
    await waitFor(() => countRuns(dir).has('n'), 'n to start while slow still runs');
    expect(countRuns(dir).has('w2')).toBe(false);

    const exited = await release(dir, run);
    expect(exited.code).toBe(0);
    const final = rowsOf(tasksText(dir));
    expect(final.get('q')).toMatchObject({ description: 'q reworded', findings: 'q: queued in wave 1' });
    expect(final.get('w2')!.findings).toBe('w2: w2 reworded');
    expect(final.get('n')!.findings).toBe('n: waits on nothing');
  });
});

describe('a save as the run ends', () => {
  it('is merged before the run ends: a task it adds runs, its edits are kept', async () => {
    const dir = session();
    writeFileSync(join(dir, 'release'), '');
    const tasksPath = join(dir, 'tasks.csv');
    const events = new RunEmitter();
    // After the last wave's checkpoint, before the run would end: a wave:done listener added
    // once the run has started runs after the checkpointer's, in the same turn.
    events.once('task:start', () => {
      events.on('wave:done', ({ wave }) => {
        if (wave !== 3) return;
        const text = readFileSync(tasksPath, 'utf8');
        writeFileSync(tasksPath, `${text.replace('"Last"', '"Last, seen by a person"')}${typedRow(text, ['after', 'After', 'one more', 'r', 'last'])}\n`);
      });
    });
    const summary = await runSession(dir, { executor: { type: 'command', template: kCmd }, events });
    expect(summary.exitCode).toBe(0);
    expect(summary.stopped).toBeUndefined();
    const final = rowsOf(readFileSync(tasksPath, 'utf8'));
    expect(final.get('last')).toMatchObject({ title: 'Last, seen by a person', status: 'completed' });
    expect(final.get('after')).toMatchObject({ status: 'completed', findings: 'after: one more', wave: '4' });
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, slow: 1, later: 1, gone: 1, last: 1, after: 1 });
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

  it('rewrites its own file as often as asked; a save by someone else is written over only once it is read', () => {
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
    const read = writer.readSaved();
    expect(read.kind).toBe('read');
    expect(writer.editedByOthers()).toBe(false);
    expect(writer.write()).toBe(true);
  });

  it('a save that lands while the run writes is not replaced: the rename is not made, and the save is read and written over only after', () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const saved = readFileSync(tasksPath, 'utf8').replace('"first"', '"first, saved while csv-wave wrote"');
    let landed = false;
    // The person's save lands while the new text goes to the temporary file, before the rename.
    const racing: WriteFn = (fd, bytes, offset, length) => {
      if (!landed) {
        landed = true;
        writeFileSync(tasksPath, saved);
      }
      return writeSync(fd, bytes, offset, length);
    };
    const bytes = readFileSync(tasksPath);
    const { ino, size, mtimeMs } = statSync(tasksPath);
    const table = parseTasks(bytes.toString('utf8'));
    const writer = new TasksWriter(tasksPath, table, { ino, size, mtimeMs }, createHash('sha256').update(bytes).digest('hex'), racing);
    table.rows[0]!.status = 'completed';
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe(saved);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(writer.readSaved().kind).toBe('read');
    expect(writer.write()).toBe(true);
  });

  it('a save that does not parse, or lost a required column, is not read as known: nothing is written over it', () => {
    const dir = session();
    const tasksPath = join(dir, 'tasks.csv');
    const { writer } = TasksWriter.read(tasksPath);
    writeFileSync(tasksPath, 'id,title\n"a,"A"\n');
    const read = writer.readSaved();
    expect(read).toMatchObject({ kind: 'unreadable', error: { code: 'CSV_PARSE' } });
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe('id,title\n"a,"A"\n');
    // A header that lost a column its pipeline requires cannot be merged either.
    const noRole = 'id,title,description\n"a","A","first"\n';
    writeFileSync(tasksPath, noRole);
    expect(writer.readSaved({ required: requiredColumns('brainstorm') })).toMatchObject({
      kind: 'unreadable',
      error: { code: 'CSV_MISSING_COLUMN', message: 'Missing required column: role (the brainstorm pipeline needs it)' },
    });
    expect(writer.write()).toBe(false);
    expect(readFileSync(tasksPath, 'utf8')).toBe(noRole);
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
