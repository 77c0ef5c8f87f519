import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { buildSession } from '../helpers/session-builder.js';

const kSessionJson = JSON.stringify({ pipeline: 'generic' });
/** Task b fails until the file `fixed` exists; every task says which run of it this is. */
const kCmd =
  `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = b ] && [ ! -f fixed ]; then echo "b is broken" >&2; exit 1; fi; ` +
  'echo "done $CSV_WAVE_TASK_ID run $(grep -cx "$CSV_WAVE_TASK_ID" runs.log)"';

/**
 * a → b → c (waves 1, 2, 3), x alone in wave 1, y in wave 2 after x, z in wave 3 after b and y.
 */
function session(): string {
  return buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode',
      '"a","A","first","r","","","csv-wave"',
      '"b","B","second","r","a","","csv-wave"',
      '"c","C","third","r","b","","csv-wave"',
      '"x","X","alone","r","","","csv-wave"',
      '"y","Y","after x","r","x","","csv-wave"',
      '"z","Z","after b and y","r","b;y","","csv-wave"',
      '',
    ].join('\n'),
    { session: kSessionJson },
  );
}

function rows(dir: string): Map<string, TaskRow> {
  return new Map(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => [row.id, row]));
}

/** A finished session where every task ran once. */
async function completedSession(): Promise<string> {
  const dir = session();
  writeFileSync(join(dir, 'fixed'), '');
  expect((await runCli('run', dir, '--cmd', kCmd)).code).toBe(0);
  return dir;
}

/** Every file of a folder, recursively, with its bytes. */
function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(path.slice(dir.length), readFileSync(path));
    }
  };
  walk(dir);
  return files;
}

describe('rerun --failed', () => {
  it('resets failed tasks and the tasks skipped because of them, and runs them again', async () => {
    const dir = session();
    const first = await runCli('run', dir, '--cmd', kCmd);
    expect(first.code).toBe(1);
    let byId = rows(dir);
    expect(byId.get('b')).toMatchObject({ status: 'failed' });
    expect(byId.get('b')!.error).toMatch(/b is broken/);
    expect(byId.get('c')).toMatchObject({ status: 'skipped', error: 'Dependency failed or skipped: b (failed)' });
    expect(byId.get('z')).toMatchObject({ status: 'skipped', error: 'Dependency failed or skipped: b (failed)' });

    writeFileSync(join(dir, 'fixed'), '');
    const again = await runCli('rerun', dir, '--failed', '--cmd', kCmd);
    expect(again.code).toBe(0);
    byId = rows(dir);
    for (const row of byId.values()) expect(row.status, row.id).toBe('completed');
    expect(byId.get('b')).toMatchObject({ findings: 'done b run 2', error: '' });
    expect(byId.get('c')!.findings).toBe('done c run 1');
    expect(byId.get('a')!.findings).toBe('done a run 1');
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 2, c: 1, x: 1, y: 1, z: 1 });
  });

  it('with nothing failed, resets nothing and runs nothing', async () => {
    const dir = await completedSession();
    const result = await runCli('rerun', dir, '--failed', '--cmd', kCmd);
    expect(result.code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, x: 1, y: 1, z: 1 });
  });
});

describe('rerun --wave', () => {
  it('resets every task of the wave and, by default, everything downstream', async () => {
    const dir = await completedSession();
    expect((await runCli('rerun', dir, '--wave', '2', '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 2, c: 2, x: 1, y: 2, z: 2 });
    expect(rows(dir).get('y')!.findings).toBe('done y run 2');
  });

  it('with --no-cascade resets only the wave', async () => {
    const dir = await completedSession();
    expect((await runCli('rerun', dir, '--wave', '2', '--no-cascade', '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 2, c: 1, x: 1, y: 2, z: 1 });
    expect(rows(dir).get('c')!.findings).toBe('done c run 1');
  });

  it('exits 2 for a wave out of range, and changes nothing', async () => {
    const dir = await completedSession();
    const before = readFileSync(join(dir, 'tasks.csv'));
    for (const wave of ['0', '4', '-1']) {
      const result = await runCli('rerun', dir, '--wave', wave, '--cmd', kCmd);
      expect(result.code, wave).toBe(2);
      expect(result.stderr, wave).toMatch(/expected a wave from 1 to 3/);
    }
    const notANumber = await runCli('rerun', dir, '--wave', 'two', '--cmd', kCmd);
    expect(notANumber.code).toBe(2);
    expect(readFileSync(join(dir, 'tasks.csv'))).toEqual(before);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, x: 1, y: 1, z: 1 });
  });
});

describe('rerun --task', () => {
  it('reruns the task and cascades to its dependents, transitively', async () => {
    const dir = await completedSession();
    expect((await runCli('rerun', dir, '--task', 'a', '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 2, b: 2, c: 2, x: 1, y: 1, z: 2 });
    for (const row of rows(dir).values()) expect(row.status, row.id).toBe('completed');
  });

  it('with --no-cascade reruns only the named tasks', async () => {
    const dir = await completedSession();
    expect((await runCli('rerun', dir, '--task', 'a', 'y', '--no-cascade', '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 2, b: 1, c: 1, x: 1, y: 2, z: 1 });
    expect(rows(dir).get('b')!.findings).toBe('done b run 1');
  });

  it('with --no-cascade still runs the tasks skipped only because of the named task', async () => {
    const dir = session();
    expect((await runCli('run', dir, '--cmd', kCmd)).code).toBe(1);
    writeFileSync(join(dir, 'fixed'), '');
    const dry = await runCli('rerun', dir, '--task', 'b', '--no-cascade', '--dry-run', '--json');
    expect(JSON.parse(dry.stdout)).toEqual({ chosen: ['b'], forced: ['b'], cascaded: ['c', 'z'] });
    expect((await runCli('rerun', dir, '--task', 'b', '--no-cascade', '--cmd', kCmd)).code).toBe(0);
    for (const row of rows(dir).values()) expect(row.status, row.id).toBe('completed');
    // Completed dependents keep their results: only b and the tasks it had skipped ran again.
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 2, c: 1, x: 1, y: 1, z: 1 });
  });

  it('with --no-cascade leaves skipped a task that also waits on a failure outside the selection', async () => {
    const dir = buildSession(
      [
        'id,title,description,role,deps,context_from,exec_mode,status,error',
        '"a","A","first","r","","","csv-wave","completed",""',
        '"b","B","second","r","a","","csv-wave","failed","b broke"',
        '"c","C","third","r","b","","csv-wave","skipped","Dependency failed or skipped: b (failed)"',
        '"x","X","alone","r","","","csv-wave","completed",""',
        '"y","Y","after x","r","x","","csv-wave","failed","y broke"',
        '"z","Z","after b and y","r","b;y","","csv-wave","skipped","Dependency failed or skipped: b (failed)"',
        '',
      ].join('\n'),
      { session: kSessionJson },
    );
    const dry = await runCli('rerun', dir, '--task', 'b', '--no-cascade', '--dry-run', '--json');
    expect(JSON.parse(dry.stdout)).toEqual({ chosen: ['b'], forced: ['b'], cascaded: ['c'] });
    const both = await runCli('rerun', dir, '--task', 'b', 'y', '--no-cascade', '--dry-run', '--json');
    expect(JSON.parse(both.stdout)).toEqual({ chosen: ['b', 'y'], forced: ['b', 'y'], cascaded: ['c', 'z'] });
  });

  it('with --no-cascade also resets the tasks a rerun checkpoint had blocked', async () => {
    const dir = buildSession(
      [
        'id,title,description,role,deps,context_from,exec_mode,status,error',
        '"k","K","checkpoint","r","","","csv-wave","completed",""',
        '"m","M","after k","r","k","","csv-wave","skipped","Blocked by checkpoint k: not safe"',
        '"n","N","after m","r","m","","csv-wave","skipped","Blocked by checkpoint k: not safe"',
        '"k2","K2","another checkpoint","r","","","csv-wave","completed",""',
        '"o","O","after k2","r","k2","","csv-wave","skipped","Blocked by checkpoint k2"',
        '',
      ].join('\n'),
      { session: kSessionJson },
    );
    const dry = await runCli('rerun', dir, '--task', 'k', '--no-cascade', '--dry-run', '--json');
    expect(JSON.parse(dry.stdout)).toEqual({ chosen: ['k'], forced: ['k'], cascaded: ['m', 'n'] });
  });

  it('exits 2 for a task id not in tasks.csv, and changes nothing', async () => {
    const dir = await completedSession();
    const before = readFileSync(join(dir, 'tasks.csv'));
    const result = await runCli('rerun', dir, '--task', 'nope', '--cmd', kCmd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no task nope/);
    expect(readFileSync(join(dir, 'tasks.csv'))).toEqual(before);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, x: 1, y: 1, z: 1 });
  });
});

describe('rerun --dry-run', () => {
  it('lists exactly the tasks that would be reset and changes no file', async () => {
    const dir = session();
    expect((await runCli('run', dir, '--cmd', kCmd)).code).toBe(1);
    const before = snapshot(dir);

    const failed = await runCli('rerun', dir, '--failed', '--dry-run', '--json');
    expect(failed.code).toBe(0);
    expect(JSON.parse(failed.stdout)).toEqual({ chosen: ['b', 'c', 'z'], forced: ['b'], cascaded: [] });

    const task = await runCli('rerun', dir, '--task', 'x', '--dry-run', '--json');
    expect(JSON.parse(task.stdout)).toEqual({ chosen: ['x'], forced: ['x'], cascaded: ['y', 'z'] });

    const noCascade = await runCli('rerun', dir, '--task', 'x', '--no-cascade', '--dry-run', '--json');
    expect(JSON.parse(noCascade.stdout)).toEqual({ chosen: ['x'], forced: ['x'], cascaded: [] });

    const wave = await runCli('rerun', dir, '--wave', '1', '--dry-run');
    expect(wave.code).toBe(0);
    expect(wave.stdout).toBe('Would reset 6 task(s):\n  a\n  x\n  b (dependent)\n  c (dependent)\n  y (dependent)\n  z (dependent)\n');

    expect(snapshot(dir)).toEqual(before);
  });

  it('lists what the journal of a stopped run holds, as the rerun itself will see it', async () => {
    const dir = session();
    writeFileSync(join(dir, 'fixed'), '');
    expect((await runCli('run', dir, '--cmd', kCmd)).code).toBe(0);
    // A stopped run left b's failure in the journal only (tasks.csv still shows it completed).
    const journal = { type: 'finish', id: 'b', status: 'failed', findings: '', gc_signal: '', severity_summary: '', error: 'b broke' };
    writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), `${JSON.stringify(journal)}\n`);
    const before = snapshot(dir);

    const dry = await runCli('rerun', dir, '--failed', '--dry-run', '--json');
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual({ chosen: ['b'], forced: ['b'], cascaded: ['c', 'z'] });
    expect(snapshot(dir)).toEqual(before);

    expect((await runCli('rerun', dir, '--failed', '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 2, c: 2, x: 1, y: 1, z: 2 });
  });
});

describe('rerun usage', () => {
  it('exits 2 without a selection', async () => {
    const dir = await completedSession();
    const result = await runCli('rerun', dir, '--cmd', kCmd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/rerun needs --failed, --stale, --wave N or --task ID/);
    const dry = await runCli('rerun', dir, '--dry-run');
    expect(dry.code).toBe(2);
  });
});
