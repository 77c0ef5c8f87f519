import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { readJournal, type JournalEntry } from '../../src/session/journal.js';
import { statusOf } from '../../src/core/skip-cause.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

const kSessionJson = JSON.stringify({ pipeline: 'generic' });
const kCmd = `${kLogRun}; echo "ran $CSV_WAVE_TASK_ID"`;

/** A session as a kill -9 leaves it: b and c in progress, b's finish already journaled. */
function crashedSession(): string {
  const dir = buildSession(
    [
      'id,title,description,role,deps,context_from,exec_mode,wave,status,findings,error',
      '"a","A","first","r","","","csv-wave","1","completed","a was done before the crash",""',
      '"b","B","second","r","a","","csv-wave","2","in_progress","",""',
      '"c","C","third","r","a","","csv-wave","2","in_progress","",""',
      '"d","D","fourth","r","b;c","","csv-wave","3","pending","",""',
      '',
    ].join('\n'),
    { session: kSessionJson },
  );
  const entries: JournalEntry[] = [
    { type: 'start', id: 'b', attempt: 1 },
    { type: 'start', id: 'c', attempt: 1 },
    { type: 'finish', id: 'b', status: 'completed', findings: 'b finished just before the crash', gc_signal: '', severity_summary: '', error: '' },
  ];
  mkdirSync(join(dir, '.csv-wave'));
  writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  return dir;
}

describe('resume after a crash', () => {
  it('applies the journal, reruns only the tasks left in progress, then runs the rest', async () => {
    const dir = crashedSession();
    const result = await runCli('resume', dir, '--cmd', kCmd, '--concurrency', '4');
    expect(result.stderr).toMatch(/Recovered 2 task state\(s\) from the journal/);
    expect(result.stderr).toMatch(/1 task\(s\) left in progress by an interrupted run go back to pending/);
    expect(result.code).toBe(0);

    const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(byId.get('a')!.findings).toBe('a was done before the crash');
    expect(byId.get('b')!.findings).toBe('b finished just before the crash');
    expect(byId.get('c')!.findings).toBe('ran c');
    expect(byId.get('d')!.findings).toBe('ran d');
    expect(Object.fromEntries(countRuns(dir))).toEqual({ c: 1, d: 1 });
    // Everything the journal held is in tasks.csv now: the journal was checkpointed.
    expect(readJournal(dir)).toEqual([]);
  });

  it('`run` recovers the same way as `resume`', async () => {
    const dir = crashedSession();
    const result = await runCli('run', dir, '--cmd', kCmd);
    expect(result.code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ c: 1, d: 1 });
  });

  it('a journaled failure is kept: its dependents are skipped, nothing reruns it', async () => {
    const dir = crashedSession();
    writeFileSync(
      join(dir, '.csv-wave', 'journal.ndjson'),
      `${JSON.stringify({ type: 'finish', id: 'b', status: 'failed', findings: '', gc_signal: '', severity_summary: '', error: 'b broke' })}\n`,
    );
    const result = await runCli('resume', dir, '--cmd', kCmd);
    expect(result.code).toBe(1);
    const byId = new Map(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => [row.id, row]));
    expect(byId.get('b')).toMatchObject({ status: 'failed', error: 'b broke' });
    expect(byId.get('c')!.status).toBe('completed');
    expect(byId.get('d')).toMatchObject({ status: 'skipped', error: 'Dependency failed or skipped: b (failed)' });
    expect(Object.fromEntries(countRuns(dir))).toEqual({ c: 1 });
  });

  it('a finished session resumes to nothing and exits 0', async () => {
    const dir = crashedSession();
    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const again = await runCli('resume', dir, '--cmd', kCmd);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Nothing to run/);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ c: 1, d: 1 });
  });

  it('deletes the temporary files of writes a kill cut short, and only those', async () => {
    const dir = crashedSession();
    const dead = spawn('true');
    const deadPid = await new Promise<number>((resolve, reject) => {
      dead.on('error', reject);
      dead.on('exit', () => resolve(dead.pid!));
    });
    const leftovers = [`tasks.csv.${deadPid}.tmp`, `wave-2.csv.${deadPid}.tmp`];
    const kept = [`notes.csv.${deadPid}.tmp`, `tasks.csv.${process.ppid}.tmp`];
    for (const name of [...leftovers, ...kept]) writeFileSync(join(dir, name), '"half a fi');
    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    const left = readdirSync(dir).filter((name) => name.endsWith('.tmp'));
    expect(left.sort()).toEqual([...kept].sort());
  });
});

describe('Ctrl-C', () => {
  it('the first SIGINT stops starting tasks and lets running ones finish; exit 130; resume goes on', async () => {
    const dir = crashedSession(); // b and c were left in progress; this run starts them again
    writeFileSync(join(dir, '.csv-wave', 'journal.ndjson'), '');
    const gated = `${kLogRun}; while [ ! -f release ]; do sleep 0.02; done; echo "ran $CSV_WAVE_TASK_ID"`;
    const run = spawnCli('run', dir, '--cmd', gated);
    await waitFor(() => countRuns(dir).has('b') && countRuns(dir).has('c'), 'b and c to start');
    run.child.kill('SIGINT');
    await waitFor(() => run.stderrSoFar().includes('SIGINT: stopping'), 'the run to notice');
    writeFileSync(join(dir, 'release'), '');
    const stopped = await run.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toMatch(/Interrupted: no new task was started/);
    const byId = new Map(parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => [row.id, row]));
    expect(byId.get('b')).toMatchObject({ status: 'completed', findings: 'ran b' });
    expect(byId.get('c')).toMatchObject({ status: 'completed', findings: 'ran c' });
    expect(statusOf(byId.get('d')!)).toBe('pending');
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);

    expect((await runCli('resume', dir, '--cmd', kCmd)).code).toBe(0);
    expect(Object.fromEntries(countRuns(dir))).toEqual({ b: 1, c: 1, d: 1 });
  });
});
