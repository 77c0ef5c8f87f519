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

/** The brainstorm sample, its tasks logging each execution to runs.log. */
function sample(): string {
  const dir = copySample('brainstorm');
  const path = join(dir, 'session.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as { executor: { cmd: string } };
  config.executor.cmd = `${kLogRun}; ${config.executor.cmd}`;
  writeFileSync(path, JSON.stringify(config));
  return dir;
}

function outcome(dir: string): string[][] {
  return [...readRows(dir).values()].map((row) => [row.id, row.deps, row.status, row.gc_signal, row.findings, row.error]);
}

/**
 * The sample's second GC check converges and skips the revision round below it (IDEA-004).
 * A kill -9 right after the check's result is written, before the skip's own entry, must
 * not let a resume run the round that the check's result skipped.
 */
describe('kill -9 right after a GC check converged, then resume', () => {
  test('the tasks it skipped stay skipped, nothing finished runs again, and the session ends as an unbroken run', async () => {
    const reference = sample();
    const ran = await runCli('run', reference);
    expect(ran.code, ran.stderr).toBe(0);
    expect(readRows(reference).get('IDEA-004')).toMatchObject({ status: 'skipped', error: 'Skipped: GC converged (GC-CHECK-002)' });

    const dir = sample();
    const run = spawnCliWith({ env: { NODE_OPTIONS: `--import ${kKillFixture}`, CSV_WAVE_TEST_KILL_AFTER_WRITE: '"type":"finish","id":"GC-CHECK-002"' } }, 'run', dir);
    const exit = await run.exited;
    expect(exit.signal, exit.stderr).toBe('SIGKILL');
    await waitFor(() => sessionCommands(dir).length === 0, 'the commands of the killed run to end');
    // The kill came right after the check's result: the journal holds it, and no entry of IDEA-004's own.
    const journal = readJournal(dir);
    expect(journal.some((entry) => entry.type === 'finish' && entry.id === 'GC-CHECK-002')).toBe(true);
    expect(journal.some((entry) => entry.type === 'finish' && entry.id === 'IDEA-004')).toBe(false);
    const crashed = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
    replayJournal(crashed, journal);
    expect(crashed.find((row) => row.id === 'IDEA-004')).toMatchObject({ status: 'skipped', error: 'Skipped: GC converged (GC-CHECK-002)' });
    const runsBefore = countRuns(dir);

    const resume = await runCli('resume', dir);
    expect(resume.code, resume.stderr).toBe(0);
    expect(outcome(dir)).toEqual(outcome(reference));
    expect(countRuns(dir).get('IDEA-004')).toBeUndefined();
    for (const [id, count] of runsBefore) expect(countRuns(dir).get(id), id).toBe(count);
  });
});
