import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { sessionCommands } from '../../src/backend/local/child-groups.js';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { readJournal, replayJournal } from '../../src/session/journal.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { copySample, readRows } from '../helpers/session-builder.js';
import { spawnCliWith, waitFor } from '../helpers/spawn-cli.js';

/** Kills the run with SIGKILL at one chosen instant (test/fixtures/kill-at.mjs). */
const kKillFixture = fileURLToPath(new URL('../fixtures/kill-at.mjs', import.meta.url));

/** The cells a run decides, per task, in file order: what a killed and resumed run must end with. */
function outcome(dir: string): string[][] {
  return [...readRows(dir).values()].map((row) => [row.id, row.deps, row.context_from, row.wave, row.status, row.route, row.gc_signal, row.findings, row.error]);
}

function registry(dir: string): string[] {
  const { artifacts } = JSON.parse(readFileSync(join(dir, 'artifact-registry.json'), 'utf8')) as {
    artifacts: { artifact_id: string; version: string; validation_status: string; metadata: { task_id: string }; validated_by?: string }[];
  };
  return artifacts.map((entry) => `${entry.artifact_id} v${entry.version} ${entry.validation_status} by ${entry.metadata.task_id} (${entry.validated_by ?? '-'})`);
}

/** The sample, its tasks logging each execution to runs.log. */
function sample(): string {
  const dir = copySample('lifecycle');
  const path = join(dir, 'session.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as { executor: { cmd: string } };
  config.executor.cmd = `${kLogRun}; node scripted-agent.mjs`;
  writeFileSync(path, JSON.stringify(config));
  return dir;
}

let reference: Promise<{ outcome: string[][]; registry: string[] }> | undefined;
function referenceRun(): Promise<{ outcome: string[][]; registry: string[] }> {
  reference ??= (async () => {
    const dir = sample();
    const run = await runCli('run', dir, '--answers', join(dir, 'answers.json'));
    expect(run.code, run.stderr).toBe(0);
    return { outcome: outcome(dir), registry: registry(dir) };
  })();
  return reference;
}

/**
 * Each dynamic change, cut by a kill -9 at the instant that matters: what the change adds
 * is journaled (or the registry written), the task that made it is not recorded as finished.
 */
type Rows = Map<string, { status: string; route: string }>;
const finished = (rows: Rows, id: string) => ['completed', 'failed', 'skipped'].includes(rows.get(id)?.status ?? '');
const kKills: [string, Record<string, string>, (rows: Rows) => boolean][] = [
  [
    'the quality gate appended IMPROVE-001 and QUALITY-002',
    { CSV_WAVE_TEST_KILL_AFTER_WRITE: '"id":"IMPROVE-001"' },
    (rows) => rows.has('QUALITY-002') && !finished(rows, 'QUALITY-001'),
  ],
  ['a rule injected SECURITY-001 after PLAN-001', { CSV_WAVE_TEST_KILL_AFTER_WRITE: '"id":"SECURITY-001"' }, (rows) => rows.has('SECURITY-001') && !finished(rows, 'PLAN-001')],
  [
    'PLAN-001 finished with its route, before ARCH-001 was skipped',
    { CSV_WAVE_TEST_KILL_AFTER_WRITE: '"type":"finish","id":"PLAN-001"' },
    (rows) => rows.get('PLAN-001')?.route === 'orchestrated' && !finished(rows, 'ARCH-001'),
  ],
  [
    "TEST-001 failed IMPL-001's code and its fix round was appended",
    { CSV_WAVE_TEST_KILL_AFTER_WRITE: '"id":"IMPL-001-fix-1"' },
    (rows) => rows.has('TEST-001-recheck-1') && !finished(rows, 'TEST-001'),
  ],
  [
    "artifact-registry.json took TEST-001's verdicts, its finish not journaled",
    { CSV_WAVE_TEST_KILL_AFTER_RENAME: 'artifact-registry.json', CSV_WAVE_TEST_KILL_RENAME_HOLDS: '"validated_by": "TEST-001"' },
    (rows) => !finished(rows, 'TEST-001'),
  ],
  [
    "artifact-registry.json took the quality gate's resume, its finish not journaled",
    { CSV_WAVE_TEST_KILL_AFTER_RENAME: 'artifact-registry.json', CSV_WAVE_TEST_KILL_RENAME_HOLDS: '"validated_by": "QUALITY-002"' },
    (rows) => !finished(rows, 'QUALITY-002') && finished(rows, 'QUALITY-001'),
  ],
];

describe('kill -9 in the middle of each dynamic change of the lifecycle, then resume', () => {
  test.each(kKills)('%s: nothing lost, nothing appended twice, nothing finished run again', async (_name, env, cut) => {
    const expected = await referenceRun();
    const dir = sample();
    const run = spawnCliWith({ env: { NODE_OPTIONS: `--import ${kKillFixture}`, ...env } }, 'run', dir, '--answers', join(dir, 'answers.json'));
    const exit = await run.exited;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    await waitFor(() => sessionCommands(dir).length === 0, 'the commands of the killed run to end');

    // What the resume starts from: tasks.csv with the journal applied.
    const crashed = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
    replayJournal(crashed, readJournal(dir));
    // The kill came in the middle of the change.
    expect(cut(new Map(crashed.map((row) => [row.id, row])))).toBe(true);
    const done = crashed.filter((row) => row.status === 'completed').map((row) => row.id);
    const runsBefore = countRuns(dir);

    const resume = await runCli('resume', dir, '--answers', join(dir, 'answers.json'));
    expect(resume.code, resume.stderr).toBe(0);
    expect(outcome(dir)).toEqual(expected.outcome);
    expect(registry(dir)).toEqual(expected.registry);
    const ids = [...readRows(dir).keys()];
    expect(new Set(ids).size).toBe(ids.length);
    const runs = countRuns(dir);
    for (const id of done) expect(runs.get(id), id).toBe(runsBefore.get(id));
  });
});
