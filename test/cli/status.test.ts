import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession } from '../helpers/session-builder.js';
import { kAllStatusesCsv, kAllStatusesTasks, kLongFindings, kSeedHeader, withPlainTasksPath } from './sessions.js';

interface StatusDocument {
  tasks: Record<string, string>[];
  counts: Record<string, number>;
}

/** A status line split into its parts: `[TAG]  ID  (role) -> detail`. */
function parseLine(line: string): { tag: string; id: string; role: string; detail: string } {
  const match = /^(\[[A-Z?-]+\])\s+(\S+)\s+\((.*?)\)\s+-> (.*)$/.exec(line);
  if (!match) throw new Error(`not a status line: ${JSON.stringify(line)}`);
  return { tag: match[1]!, id: match[2]!, role: match[3]!, detail: match[4]! };
}

describe('csv-wave status', () => {
  test('one line per task, in file order, tagged by status', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const result = await runCli('status', dir);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);  // IDEA-3 failed: exit 1, as for every command.
    const taskLines = result.stdout.split('\n').filter((line) => line.startsWith('['));
    expect(taskLines.map(parseLine)).toEqual([
      // [DONE] shows the findings on one line, at most 60 characters, cut between two words.
      { tag: '[DONE]', id: 'IDEA-1', role: 'ideator', detail: 'Twelve ideas were generated across four angles, the…' },
      // No run holds the lock: the task was left in_progress by a run that is gone.
      { tag: '[INTR]', id: 'IDEA-2', role: 'ideator', detail: 'interrupted: no run holds the lock; resume runs it again' },
      { tag: '[FAIL]', id: 'IDEA-3', role: 'ideator', detail: 'exit code 3: model refused' },
      { tag: '[DONE]', id: 'FORMULA', role: 'ideator', detail: '=SUM(A1:A9) is what the idea costs' },
      { tag: '[SKIP]', id: 'CHAL-1', role: 'challenger', detail: 'Dependency failed or skipped' },
      { tag: '[WAIT]', id: 'CHAL-2', role: 'challenger', detail: 'blocked by IDEA-2' },
      { tag: '[DONE]', id: 'CHAL-3', role: 'challenger', detail: 'No critical issue' },
      { tag: '[DONE]', id: 'GC-1', role: 'gc-controller', detail: 'CONVERGED' },
      { tag: '[SKIP]', id: 'REV-1', role: 'ideator', detail: 'Skipped: GC converged' },
      // A task skipped because a GC check converged satisfies its dependents.
      { tag: '[----]', id: 'SYNTH-1', role: 'synthesizer', detail: 'ready' },
    ]);
    expect(result.stdout).toContain('10 tasks: pending 2, interrupted 1, completed 4, failed 1, skipped 2\n');
  });

  test('[RUN] while a live run holds the lock', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    mkdirSync(join(dir, '.csv-wave'));
    // A live process stands for the run (not this one: status runs in it, and a lock naming
    // the reader's own pid that the reader does not hold is a dead namesake's).
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
    writeFileSync(join(dir, '.csv-wave', 'lock'), JSON.stringify({ pid: live.pid, hostname: hostname(), started: 'now' }));
    const result = await runCli('status', dir);
    expect(result.code).toBe(1);
    const line = result.stdout.split('\n').find((text) => text.includes(' IDEA-2 '));
    expect(parseLine(line!)).toEqual({ tag: '[RUN]', id: 'IDEA-2', role: 'ideator', detail: 'running' });
    expect(result.stdout).toContain('10 tasks: pending 2, in_progress 1, completed 4, failed 1, skipped 2\n');
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as Record<string, unknown>;
    expect(json['interrupted']).toBeUndefined();
    } finally {
      live.kill();
    }
  });

  test('--json names the interrupted tasks when no run holds the lock', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const json = JSON.parse((await runCli('status', dir, '--json')).stdout) as Record<string, unknown>;
    expect(json['interrupted']).toEqual(['IDEA-2']);
  });

  test('--only and --wave list only the chosen tasks; the counts stay the whole session\'s', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const ids = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('[')).map((line) => parseLine(line).id);
    const skipped = await runCli('status', dir, '--only', 'skipped');
    expect(skipped.code).toBe(1);
    expect(ids(skipped.stdout)).toEqual(['CHAL-1', 'REV-1']);
    expect(skipped.stdout).toContain('10 tasks: pending 2, interrupted 1, completed 4, failed 1, skipped 2\n');
    expect(ids((await runCli('status', dir, '--only', 'failed,pending')).stdout)).toEqual(['IDEA-3', 'CHAL-2', 'SYNTH-1']);
    expect(ids((await runCli('status', dir, '--wave', '2')).stdout)).toEqual(['CHAL-1', 'CHAL-2', 'CHAL-3']);
    expect(ids((await runCli('status', dir, '--wave', '1', '--only', 'completed')).stdout)).toEqual(['IDEA-1', 'FORMULA']);
    const json = JSON.parse((await runCli('status', dir, '--json', '--only', 'failed')).stdout) as StatusDocument;
    expect(json.tasks.map((task) => task['id'])).toEqual(['IDEA-3']);
    expect(json.counts).toEqual({ pending: 2, in_progress: 1, completed: 4, failed: 1, skipped: 2 });
  });

  test('the exit code is a gate: 1 for a failed task, a task skipped for a failure or a block; 0 for completed, converged and pending', async () => {
    const code = async (csv: string) => (await runCli('status', buildSession(csv, { session: null }))).code;
    const header = 'id,description,role,deps,status,error\n';
    expect(await code(`${header}A,do,ideator,,completed,\nB,do,ideator,,,\n`)).toBe(0);
    expect(await code(`${header}A,do,ideator,,completed,\nB,do,challenger,A,skipped,Skipped: GC converged (CHECK-1)\n`)).toBe(0);
    expect(await code(`${header}A,do,ideator,,failed,boom\n`)).toBe(1);
    expect(await code(`${header}A,do,ideator,,completed,\nB,do,ideator,A,skipped,Dependency failed or skipped: X (failed)\n`)).toBe(1);
    expect(await code(`${header}A,do,ideator,,completed,\nB,do,ideator,A,skipped,Blocked by checkpoint A: unsafe\n`)).toBe(1);
    const json = await runCli('status', buildSession(`${header}A,do,ideator,,failed,boom\n`, { session: null }), '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ counts: { failed: 1 } });
  });

  test('--only and --wave refuse a bad value with exit 2', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const only = await runCli('status', dir, '--only', 'done');
    expect(only.code).toBe(2);
    expect(only.stderr).toContain('Expected `--only` to be statuses among pending, in_progress, completed, failed, skipped, comma-separated, got `done`');
    const wave = await runCli('status', dir, '--wave', 'two');
    expect(wave.code).toBe(2);
    expect(wave.stderr).toContain('Expected `--wave` to be a wave number (1, 2, …), got `two`');
  });

  test('a pending task lists every unfinished dependency that blocks it', async () => {
    const dir = buildSession(`id,description,role,deps,status
A,do,ideator,,failed
B,do,ideator,,
C,do,challenger,A;B,
`, { session: null });
    const result = await runCli('status', dir);
    expect(result.code).toBe(1);
    const line = result.stdout.split('\n').find((text) => text.includes(' C '));
    expect(parseLine(line!)).toEqual({ tag: '[WAIT]', id: 'C', role: 'challenger', detail: 'blocked by A, B' });
  });

  test('--json: every row keyed by column name, cells decoded, and counts per status', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const result = await runCli('status', dir, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout) as { tasks: Record<string, string>[]; counts: Record<string, number> };
    // `interrupted`: IDEA-2 is in_progress and no run holds the lock.
    expect(Object.keys(document).sort()).toEqual(['counts', 'interrupted', 'tasks']);
    expect(document.counts).toEqual({ pending: 2, in_progress: 1, completed: 4, failed: 1, skipped: 2 });

    const columns = kSeedHeader.split(',');
    expect(document.tasks.map((task) => Object.keys(task))).toEqual(kAllStatusesTasks.map(() => columns));
    expect(document.tasks.map((task) => [task['id'], task['status'], task['wave']])).toEqual(
      kAllStatusesTasks.map((task) => [task.id, task.status, String(task.wave)]),
    );
    const byId = new Map(document.tasks.map((task) => [task['id'], task]));
    expect(byId.get('IDEA-1')!['findings']).toBe(kLongFindings);
    expect(byId.get('IDEA-3')!['error']).toBe('exit code 3: model refused');
    expect(byId.get('CHAL-2')!['deps']).toBe('IDEA-1;IDEA-2');
  });

  test('findings that start like a formula are stored guarded and come back exact', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const stored = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    expect(stored).toContain(`"'=SUM(A1:A9) is what the idea costs","'-HIGH","'@2"`);

    const result = await runCli('status', dir, '--json');
    const document = JSON.parse(result.stdout) as { tasks: Record<string, string>[] };
    const formula = document.tasks.find((task) => task['id'] === 'FORMULA')!;
    expect(formula['findings']).toBe('=SUM(A1:A9) is what the idea costs');
    expect(formula['gc_signal']).toBe('-HIGH');
    expect(formula['severity_summary']).toBe('@2');
  });

  test('an extra column comes back in --json under its own name, in file order', async () => {
    const dir = buildSession('id,owner,description,role\nA,Ana,do,ideator\n', { session: null });
    const result = await runCli('status', dir, '--json');
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as { tasks: Record<string, string>[] };
    expect(Object.keys(document.tasks[0]!).slice(0, 4)).toEqual(['id', 'owner', 'description', 'role']);
    expect(document.tasks[0]!['owner']).toBe('Ana');
  });

  test('never changes tasks.csv', async () => {
    const dir = buildSession(kAllStatusesCsv, { session: null });
    const path = join(dir, 'tasks.csv');
    const before = readFileSync(path);
    await runCli('status', dir);
    await runCli('status', dir, '--json');
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test('shows a file that would not validate, a mistyped status included, without crashing', async () => {
    const dir = buildSession(`id,description,role,deps,status
A,do,ideator,B,done
B,do,ideator,A,completed
`, { session: null });
    const text = await runCli('status', dir);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n').filter((line) => line.startsWith('['));
    expect(lines.map(parseLine).map((line) => [line.tag, line.id, line.detail])).toEqual([
      ['[????]', 'A', 'invalid status: done'],
      ['[DONE]', 'B', ''],
    ]);
    expect(text.stdout).toContain('2 tasks: completed 1, invalid status 1\n');

    const json = await runCli('status', dir, '--json');
    expect(json.code).toBe(0);
    const document = JSON.parse(json.stdout) as { counts: Record<string, number> };
    expect(document.counts).toEqual({ pending: 0, in_progress: 0, completed: 1, failed: 0, skipped: 0 });
  });

  test('exit code 2 for a file that does not parse, with the line where the row starts', async () => {
    const dir = buildSession(`id,description,role
A,"two
lines",ideator
B,do,ideator,surplus
`, { session: null });
    const result = await runCli('status', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(withPlainTasksPath(result.stderr, dir)).toBe('tasks.csv:4: CSV parse error: row has 4 fields but the header has 3\n');
  });
});
