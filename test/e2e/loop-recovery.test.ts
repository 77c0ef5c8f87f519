import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { rowCells } from '../../src/csv/tasks-table.js';
import type { TaskRow } from '../../src/core/task.js';
import { serializeTasks } from '../../src/csv/serialize-tasks.js';
import { sessionCommands } from '../../src/backend/local/child-groups.js';
import { engineDir, readJournal, replayJournal, type JournalEntry } from '../../src/session/journal.js';
import { runCli } from '../helpers/cli.js';
import { readRows } from '../helpers/session-builder.js';
import { readCsvRecords } from '../helpers/test-files.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { kScriptedAgentCmd } from '../helpers/scripted-agent.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

const kTopic = 'Fewer meetings';

async function initBrainstorm(cmd: string): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-e2e-')), 'session');
  const init = await runCli('init', dir, '--template', 'brainstorm', '--topic', kTopic, '--cmd', cmd);
  expect(init.code, init.stderr).toBe(0);
  return dir;
}

/** The cells a run decides, per task, in file order: what two runs of one session must agree on. */
function outcome(rows: Map<string, TaskRow>): string[][] {
  return [...rows.values()].map((row) => [row.id, row.deps, row.context_from, row.gc_round, row.wave, row.status, row.findings, row.gc_signal, row.error]);
}

/** An uninterrupted brainstorm run of the scripted agent, to compare the others with. */
let reference: Promise<string[][]> | undefined;
function referenceOutcome(): Promise<string[][]> {
  reference ??= (async () => {
    const dir = await initBrainstorm(kScriptedAgentCmd);
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    return outcome(readRows(dir));
  })();
  return reference;
}

/** Rewrites tasks.csv with `change` applied to its rows. */
function editTasks(dir: string, change: (rows: TaskRow[]) => void): void {
  const path = join(dir, 'tasks.csv');
  const table = parseTasks(readFileSync(path, 'utf8'));
  change(table.rows);
  writeFileSync(path, serializeTasks(table));
}

function resetRow(row: TaskRow, status: string): void {
  Object.assign(row, { status, findings: '', gc_signal: '', severity_summary: '', error: '' });
}

/**
 * Waits until the commands a killed run left behind have ended (they finish by themselves),
 * so that the resume starts from a quiet session. The checks below do not depend on it:
 * a task finished before the kill logged its execution before finishing.
 */
async function settle(dir: string): Promise<void> {
  await waitFor(() => sessionCommands(dir).length === 0, 'the commands of the killed run to end');
}

describe('a GC loop interrupted or run again', () => {
  test('kill -9 after GC-CHECK-001 appended its round: resume keeps the rows, duplicates nothing, ends like an uninterrupted run', async () => {
    const expected = await referenceOutcome();
    // A slow agent, so that the kill lands while the loop is still going.
    const dir = await initBrainstorm(`${kLogRun}; sleep 0.3; ${kScriptedAgentCmd}`);
    const run = spawnCli('run', dir);
    const journal = join(engineDir(dir), 'journal.ndjson');
    const appended = () =>
      readFileSync(join(dir, 'tasks.csv'), 'utf8').includes('"CHALLENGE-002"') ||
      (existsSync(journal) && readFileSync(journal, 'utf8').includes('"CHALLENGE-002"'));
    await waitFor(appended, 'GC-CHECK-001 to append CHALLENGE-002');
    expect(run.child.kill('SIGKILL')).toBe(true);
    const exit = await run.exited;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    await settle(dir);

    // What the next run will start from: tasks.csv with the journal applied.
    const crashed = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
    replayJournal(crashed, readJournal(dir));
    const byId = new Map(crashed.map((row) => [row.id, row]));
    for (const id of ['CHALLENGE-002', 'GC-CHECK-002', 'IDEA-004']) expect(byId.has(id), id).toBe(true);
    expect(byId.get('SYNTH-001')!.deps).toBe('IDEA-004');
    expect(byId.get('EVAL-001')!.status).not.toBe('completed');
    const doneBefore = crashed.filter((row) => row.status === 'completed' && row.role !== 'gc-controller').map((row) => row.id);
    const runsBefore = countRuns(dir);

    const resume = await runCli('resume', dir);
    expect(resume.code, resume.stderr).toBe(0);
    const rows = readRows(dir);
    expect(outcome(rows)).toEqual(expected);
    expect(new Set(readTasksIds(dir)).size).toBe(readTasksIds(dir).length);
    // Finished work was not done again.
    const runs = countRuns(dir);
    for (const id of doneBefore) expect(runs.get(id), id).toBe(runsBefore.get(id));
  });

  test('a crash between the appended rows reaching tasks.csv and the GC check being recorded: the check decides again and reuses its round', async () => {
    const expected = await referenceOutcome();
    // A first run that stops right after GC-CHECK-001 appended its round (IDEA-003 fails) …
    const dir = await initBrainstorm(`[ "$CSV_WAVE_TASK_ID" != IDEA-003 ] || [ -e go ] || exit 1; ${kScriptedAgentCmd}`);
    expect((await runCli('run', dir)).code).toBe(1);
    // … then the file as that instant left it: the check still in progress, the round after it pending.
    editTasks(dir, (rows) => {
      for (const row of rows) {
        if (row.id === 'GC-CHECK-001') resetRow(row, 'in_progress');
        else if (!['IDEA-001', 'IDEA-002', 'CHALLENGE-001'].includes(row.id)) resetRow(row, 'pending');
      }
    });
    writeFileSync(join(dir, 'go'), '');

    const resume = await runCli('resume', dir);
    expect(resume.code, resume.stderr).toBe(0);
    expect(outcome(readRows(dir))).toEqual(expected);
  });

  test('a crash that left the appended round only in the journal: resume replays its add and update entries', async () => {
    const expected = await referenceOutcome();
    const dir = await initBrainstorm(`[ "$CSV_WAVE_TASK_ID" != IDEA-003 ] || [ -e go ] || exit 1; ${kScriptedAgentCmd}`);
    expect((await runCli('run', dir)).code).toBe(1);
    // tasks.csv as it was before GC-CHECK-001 decided; the decision and its rows in the journal.
    const appended = ['CHALLENGE-002', 'GC-CHECK-002', 'IDEA-004'];
    const entries: JournalEntry[] = [{ type: 'start', id: 'GC-CHECK-001', attempt: 1 }];
    editTasks(dir, (rows) => {
      for (const row of rows.filter((r) => appended.includes(r.id))) {
        resetRow(row, 'pending');
        entries.push({ type: 'add', row: rowCells(row) });
      }
      const synth = rows.find((row) => row.id === 'SYNTH-001')!;
      entries.push({ type: 'update', id: 'SYNTH-001', deps: synth.deps, context_from: synth.context_from });
      Object.assign(synth, { deps: 'IDEA-003', context_from: 'IDEA-001;IDEA-002;IDEA-003;CHALLENGE-001' });
      const check = rows.find((row) => row.id === 'GC-CHECK-001')!;
      const { status, findings, gc_signal, severity_summary, error } = check;
      entries.push({ type: 'finish', id: check.id, status: status as 'completed', findings, gc_signal, severity_summary, error });
      resetRow(check, 'in_progress');
      for (const row of rows) if (['IDEA-003', 'EVAL-001', 'SYNTH-001'].includes(row.id)) resetRow(row, 'pending');
      rows.splice(0, rows.length, ...rows.filter((row) => !appended.includes(row.id)));
    });
    writeFileSync(join(engineDir(dir), 'journal.ndjson'), entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    writeFileSync(join(dir, 'go'), '');

    const resume = await runCli('resume', dir);
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stderr).toMatch(/Recovered \d+ task state\(s\) from the journal/);
    expect(outcome(readRows(dir))).toEqual(expected);
  });

  test('rerun --task GC-CHECK-001: the same decision runs the round it appended before, and appends no other', async () => {
    const expected = await referenceOutcome();
    const dir = await initBrainstorm(kScriptedAgentCmd);
    expect((await runCli('run', dir)).code).toBe(0);
    const rerun = await runCli('rerun', dir, '--task', 'GC-CHECK-001');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(outcome(readRows(dir))).toEqual(expected);
  });

  test('rerun --task GC-CHECK-001 deciding CONVERGED this time: the round it appended before is skipped as converged', async () => {
    const dir = await initBrainstorm(kScriptedAgentCmd);
    expect((await runCli('run', dir)).code).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'session.json'), JSON.stringify({ ...config, max_gc_rounds: 1 }));

    const rerun = await runCli('rerun', dir, '--task', 'GC-CHECK-001');
    expect(rerun.code, rerun.stderr).toBe(0);
    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual(readTasksIds(dir));
    expect(rows.get('GC-CHECK-001')).toMatchObject({ status: 'completed', gc_signal: 'CONVERGED' });
    for (const id of ['IDEA-003', 'CHALLENGE-002', 'GC-CHECK-002', 'IDEA-004']) {
      expect(rows.get(id), id).toMatchObject({ status: 'skipped', error: 'Skipped: GC converged (GC-CHECK-001)' });
    }
    for (const id of ['SYNTH-001', 'EVAL-001']) expect(rows.get(id)!.status, id).toBe('completed');
    const synth = readCsvRecords(join(dir, `wave-${rows.get('SYNTH-001')!.wave}.csv`)).find((record) => record['id'] === 'SYNTH-001')!;
    expect([...synth['prev_context']!.matchAll(/^\[Task ([^\]]+)\]/gm)].map((match) => match[1])).toEqual(['IDEA-001', 'IDEA-002', 'CHALLENGE-001']);
  });
});

describe('a discussion decided again', () => {
  async function deepAnalyzeRun(): Promise<{ dir: string; answers: (list: unknown[]) => string }> {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-e2e-')), 'session');
    expect((await runCli('init', dir, '--template', 'analyze', '--topic', kTopic, '--mode', 'deep', '--cmd', kScriptedAgentCmd)).code).toBe(0);
    let n = 0;
    const answers = (list: unknown[]) => {
      const path = join(dir, '..', `answers-${++n}.json`);
      writeFileSync(path, JSON.stringify(list));
      return path;
    };
    const run = await runCli('run', dir, '--answers', answers(['Continue', { decision: 'Adjust', focus: 'costs' }, 'Done']));
    expect(run.code, run.stderr).toBe(0);
    return { dir, answers };
  }

  test('the same answers keep the rounds added before', async () => {
    const { dir, answers } = await deepAnalyzeRun();
    const before = readTasksIds(dir);
    const rerun = await runCli('rerun', dir, '--task', 'DISCUSS-001', '--answers', answers(['Continue', { decision: 'Adjust', focus: 'costs' }, 'Done']));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(readTasksIds(dir)).toEqual(before);
    for (const row of readRows(dir).values()) expect(row.status, row.id).toBe('completed');
    expect(readRows(dir).get('SYNTH-001')!.deps).toBe('DISCUSS-003');
  });

  test('another answer skips the rounds added before, and the session stays valid', async () => {
    const { dir, answers } = await deepAnalyzeRun();
    const rerun = await runCli('rerun', dir, '--task', 'DISCUSS-001', '--answers', answers(['Done']));
    expect(rerun.code, rerun.stderr).toBe(0);
    const rows = readRows(dir);
    for (const id of ['DISCUSS-002', 'ANALYZE-fix-2', 'DISCUSS-003']) {
      expect(rows.get(id), id).toMatchObject({ status: 'skipped', error: 'Skipped: superseded by a new decision of DISCUSS-001' });
    }
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'DISCUSS-001' });
    expect(rows.get('SYNTH-001')!.context_from).toBe('ANALYZE-001;ANALYZE-002;ANALYZE-003;DISCUSS-001');
    expect((await runCli('validate', dir)).code).toBe(0);
  });
});

function readTasksIds(dir: string): string[] {
  return parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows.map((row) => row.id);
}
