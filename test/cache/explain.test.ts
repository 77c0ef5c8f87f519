import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { buildSession, readRows, tasksCsv, type RowInput } from '../helpers/session-builder.js';

// Issue 25 items 5 and 6: `explain` says what the next run would do with each task and why;
// `run --dry-run` prints what it would send. Neither runs nor writes anything.

/** Each execution is logged in runs.log; a task fails while `fail/<id>` exists. */
const kCmd = `${kLogRun}; if [ -e "fail/$CSV_WAVE_TASK_ID" ]; then exit 1; fi; echo "done $CSV_WAVE_TASK_ID"`;

const kRows: RowInput[] = [
  { id: 'A', description: 'first', role: 'r' },
  { id: 'B', description: 'second', role: 'r', deps: 'A', context_from: 'A' },
  { id: 'C', description: 'third', role: 'r', deps: 'B', context_from: 'B' },
  { id: 'X', description: 'alone', role: 'r' },
  { id: 'D', description: 'breaks', role: 'r' },
  { id: 'E', description: 'after the break', role: 'r', deps: 'D' },
  { id: 'N', description: 'never cached', role: 'fresh' },
  { id: 'I', description: 'interrupted', role: 'r' },
];

/** Every file of the folder with its bytes and modification time: what "writes nothing" is checked against. */
function folderBytes(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), `${statSync(path).mtimeMs} ${readFileSync(path, 'base64')}`);
    }
  };
  walk(dir);
  return files;
}

/** The session after one run, then edited by hand as the cases need (see each line's comment). */
async function editedSession(): Promise<string> {
  const dir = buildSession(kRows, { session: { pipeline: 'generic', executor: { type: 'command', cmd: kCmd }, roles: { fresh: { cache: false } } } });
  mkdirSync(join(dir, 'fail'));
  writeFileSync(join(dir, 'fail', 'D'), '');
  const run = await runCli('run', dir);
  expect(run.code, run.stderr).toBe(1);
  const rows = [...readRows(dir).values()].map((row): RowInput => ({
    id: row.id,
    description: row.description,
    role: row.role,
    deps: row.deps,
    context_from: row.context_from,
    status: row.status,
    findings: row.findings,
    error: row.error,
  }));
  const edit = (id: string, cells: RowInput) => Object.assign(rows.find((row) => row.id === id)!, cells);
  edit('B', { description: 'second, edited' }); // stale: its description changed
  edit('X', { status: 'pending', findings: '' }); // pending, and its inputs have an entry: from the cache
  edit('N', { status: 'pending', findings: '' }); // the same, but its role says "cache": false
  edit('I', { status: 'in_progress', findings: '', description: 'interrupted, edited' }); // left in progress by a stopped run, with new inputs
  rows.push(
    { id: 'G', description: 'after a skipped one', role: 'r', deps: 'E' }, // blocked by D, the root failure
    { id: 'H', description: 'new', role: 'r' }, // pending, no entry
    { id: 'K', description: 'after the new one', role: 'r', deps: 'H', context_from: 'H' }, // pending after H
  );
  writeFileSync(join(dir, 'tasks.csv'), tasksCsv(rows));
  return dir;
}

describe('explain', () => {
  test('one line per task for each case: up to date, stale, from cache, will run (pending, interrupted, after, never cached), blocked, failed, skipped; and it writes nothing', async () => {
    const dir = await editedSession();
    const before = folderBytes(dir);
    const explained = await runCli('explain', dir);
    expect(explained.code, explained.stderr).toBe(0);
    const lines = Object.fromEntries(explained.stdout.trimEnd().split('\n').map((line) => [line.split(/\s+/)[0], line.replace(/^\S+\s+/, '')]));
    expect(lines).toEqual({
      A: 'up to date',
      B: 'stale (description changed): run and resume keep its result; rerun --stale runs it again',
      C: 'up to date',
      X: expect.stringMatching(/^from cache: same inputs as the result of \d{4}-\d\d-\d\dT\d\d:\d\dZ$/),
      D: 'failed (Command exited with code 1): run and resume leave it; rerun --failed runs it again',
      E: 'skipped (Dependency failed or skipped: D (failed)): run and resume leave it; rerun --failed runs it again',
      N: 'will run: pending (never from the cache: role fresh has "cache": false)',
      I: 'will run: interrupted (its run was stopped before it finished)',
      G: 'blocked by D (failed)',
      H: 'will run: pending',
      K: 'will run: pending, after H (from the cache if their results leave its inputs as they were)',
    });
    expect(folderBytes(dir)).toEqual(before);

    // The run does what explain said: X from the cache, N, I, H and K executed, G skipped.
    const run = await runCli('run', dir);
    expect(run.stdout).toMatch(/^\[CACHED\] X /m);
    expect(Object.fromEntries(countRuns(dir))).toMatchObject({ X: 1, N: 2, I: 2, H: 1, K: 1 });
    expect(readRows(dir).get('G')).toMatchObject({ status: 'skipped', error: 'Dependency failed or skipped: D (failed)' });
  });

  test('named tasks only, in the order named; --no-cache and a rerun\'s chosen tasks say why the cache does not answer; --json', async () => {
    const dir = await editedSession();
    const off = await runCli('explain', dir, 'X', 'A', '--no-cache');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toBe('X  will run: pending (the cache is off)\nA  up to date\n');

    // What an interrupted `rerun --task X` leaves: X executes whatever the cache holds.
    mkdirSync(join(dir, '.csv-wave'), { recursive: true });
    writeFileSync(join(dir, '.csv-wave', 'forced.json'), '{"tasks":["X"]}\n');
    const forced = await runCli('explain', dir, 'X');
    expect(forced.stdout).toBe('X  will run: pending (a rerun chose it: it executes whatever the cache holds)\n');

    const json = await runCli('explain', dir, 'G', 'K', 'B', '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      tasks: [
        { id: 'G', role: 'r', step: 'blocked', by: 'D', by_status: 'failed', explanation: 'blocked by D (failed)' },
        { id: 'K', role: 'r', step: 'run', interrupted: false, after: ['H'], no_cache: 'after', explanation: expect.stringMatching(/^will run: pending, after H/) },
        { id: 'B', role: 'r', step: 'stale', changes: ['description changed'], explanation: expect.stringMatching(/^stale \(description changed\)/) },
      ],
    });
  });

  test('unknown task ids: exit 2, naming each of them, and nothing written', async () => {
    const dir = await editedSession();
    const before = folderBytes(dir);
    const unknown = await runCli('explain', dir, 'A', 'NOPE', 'ZZZ');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No task NOPE, ZZZ in /);
    expect(unknown.stdout).toBe('');
    expect(folderBytes(dir)).toEqual(before);
  });
});

describe('run --dry-run', () => {
  test('prints each command the run would start, as parallel --dry-run does, then the counts on stderr; runs nothing and writes nothing', async () => {
    const dir = await editedSession();
    const before = folderBytes(dir);
    const dry = await runCli('run', dir, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    // The template has no placeholder: each command is the template itself; K's says it waits for H.
    expect(dry.stdout).toBe([kCmd, kCmd, kCmd, '# K, after H: shown with what is known now', kCmd, ''].join('\n'));
    expect(dry.stderr).toMatch(/^4 task\(s\) would execute \(1 of them after others the run runs first\), 1 from the cache, 1 blocked by a failure, 5 kept as they are$/m);
    expect(dry.stderr).toMatch(/the command executor calls no model/);
    expect(folderBytes(dir)).toEqual(before);
  });

  test('a template\'s placeholders are filled as the run fills them, quoted; --json lists what would be sent with the estimate', async () => {
    const dir = buildSession(
      [
        { id: 'A', description: "it's done", role: 'r' },
        { id: 'B', description: 'then $(this)', role: 'r', deps: 'A', context_from: 'A' },
      ],
      { session: { pipeline: 'generic', executor: { type: 'command', cmd: 'echo {id} "{description}" {prev_context}' } } },
    );
    const before = folderBytes(dir);
    const dry = await runCli('run', dir, '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const parsed = JSON.parse(dry.stdout) as { sent: unknown[]; estimate: { tasks: Record<string, number> } };
    expect(parsed.sent).toEqual([
      { id: 'A', role: 'r', after: [], kind: 'command', text: "echo 'A' \"it's done\" 'No previous context available'" },
      { id: 'B', role: 'r', after: ['A'], kind: 'command', text: "echo 'B' \"then \\$(this)\" 'No previous context available'" },
    ]);
    expect(parsed.estimate.tasks).toEqual({ run: 1, after: 1, cached: 0, blocked: 0, kept: 0 });
    expect(folderBytes(dir)).toEqual(before);
  });
});
