import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import type { TaskRow } from '../../src/core/task.js';
import { readJournal } from '../../src/session/journal.js';
import { buildSession } from '../helpers/session-builder.js';
import { countRuns } from '../helpers/runs-log.js';
import { spawnCliWith, waitFor, type SpawnedCli, type SpawnOptions } from '../helpers/spawn-cli.js';

// The session folder made read-only in the middle of a run. Root ignores permission bits,
// so a test running as root runs the CLI as the unprivileged user 65534 (nobody), in
// folders that user owns; as any other user the CLI runs as that user.
const kAsRoot = process.getuid?.() === 0;
const kUser: SpawnOptions = kAsRoot ? { uid: 65534, gid: 65534 } : {};

function chownTree(path: string): void {
  if (!kAsRoot) return;
  chownSync(path, 65534, 65534);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name));
}

/** chmod a-w (or u+w back) on a folder, and on everything in it when `recursive`. */
function setWritable(path: string, writable: boolean, recursive: boolean): void {
  const stat = statSync(path);
  const mode = writable ? stat.mode | 0o200 : stat.mode & ~0o222;
  if (recursive && stat.isDirectory()) for (const name of readdirSync(path)) setWritable(join(path, name), writable, true);
  chmodSync(path, mode & 0o7777);
}

function rows(dir: string): Map<string, TaskRow> {
  return new Map(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => [row.id, row]));
}

let running: { run: SpawnedCli; dir: string; logs: string } | undefined;

afterEach(async () => {
  if (!running) return;
  setWritable(running.dir, true, true);
  writeFileSync(join(running.logs, 'release'), '');
  running.run.child.kill('SIGKILL');
  await running.run.exited;
  running = undefined;
});

describe.each([
  { what: 'the session folder', recursive: false },
  { what: 'the session folder and everything in it', recursive: true },
])('$what made read-only during a run', ({ recursive }) => {
  it('stops starting tasks with a clear error (exit 1), keeps the journal, and resume goes on once it is writable', async () => {
    const dir = buildSession([
      { id: 'a', description: 'quick', role: 'r' },
      { id: 'b', description: 'quick', role: 'r' },
      { id: 'slow', description: 'waits for the test', role: 'r' },
      { id: 'd', description: 'after a', role: 'r', deps: 'a' },
      { id: 'e', description: 'after slow', role: 'r', deps: 'slow' },
    ], { session: JSON.stringify({ pipeline: 'generic', discovery_files: 'always' }) });
    // The commands log outside the session, which the test makes read-only.
    const logs = mkdtempSync(join(tmpdir(), 'csv-wave-logs-'));
    chownTree(dir);
    chownTree(logs);
    const cmd =
      `echo "$CSV_WAVE_TASK_ID" >> ${logs}/runs.log; ` +
      `if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f ${logs}/release ]; do sleep 0.02; done; fi; echo "done $CSV_WAVE_TASK_ID"`;
    const runs = () => countRuns(dir, join(logs, 'runs.log'));

    const run = spawnCliWith(kUser, 'run', dir, '--cmd', cmd, '--concurrency', '4');
    running = { run, dir, logs };
    await waitFor(
      () => run.stdoutSoFar().includes('[DONE] a ') && run.stdoutSoFar().includes('[DONE] b ') && runs().has('slow'),
      'a and b to finish and slow to start',
    );
    setWritable(dir, false, recursive);
    // The next rewrite of tasks.csv (about a second away) fails: the run says so and starts nothing.
    await waitFor(() => /no new task will start/.test(run.stderrSoFar()), 'the run to notice');
    expect(run.stderrSoFar()).toMatch(/Cannot write .*tasks\.csv.*(EACCES|EPERM)/);
    writeFileSync(join(logs, 'release'), '');
    const stopped = await run.exited;
    running = undefined;

    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stdout).toContain('Stopped: csv-wave cannot write to the session folder');
    expect(stopped.stdout).toContain(`csv-wave resume ${dir}`);
    expect(stopped.stderr).not.toMatch(/internal error|at .*\.js:\d+/);
    // Nothing new started after the failure: d and e never ran.
    expect(runs().has('d') || runs().has('e')).toBe(false);

    // tasks.csv still parses, and with the journal it holds every result of the run.
    const shown = rows(dir);
    const journaled = new Map(readJournal(dir).flatMap((entry) => (entry.type === 'finish' ? [[entry.id, entry] as const] : [])));
    for (const id of ['a', 'b']) {
      const inFile = shown.get(id)!.status === 'completed';
      expect(inFile || journaled.get(id)?.status === 'completed', `result of ${id}`).toBe(true);
    }
    if (!recursive) {
      // slow finished after the failure: its result is in the journal only.
      expect(journaled.get('slow')).toMatchObject({ status: 'completed', findings: 'done slow' });
    } else {
      // Its discovery file could not be written either: it was taken back, not failed.
      expect(journaled.get('slow')?.status).not.toBe('failed');
      expect(shown.get('slow')!.status).not.toBe('failed');
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    // Writable again: resume applies the journal and finishes the rest.
    setWritable(dir, true, recursive);
    const resumed = await spawnCliWith(kUser, 'resume', dir, '--cmd', cmd).exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const [id, row] of rows(dir)) expect(row, id).toMatchObject({ status: 'completed', findings: `done ${id}` });
    expect(readJournal(dir)).toEqual([]);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    // slow ran once: taken back when its files could not be written, its result was in the cache for the resume.
    expect(Object.fromEntries(runs())).toEqual({ a: 1, b: 1, slow: 1, d: 1, e: 1 });
  });
});
