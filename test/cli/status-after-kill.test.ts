import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseTasks } from '../../src/csv/parse-tasks.js';
import { readJournal, replayJournal } from '../../src/session/journal.js';
import { runCli } from '../helpers/cli.js';
import { kLogRun } from '../helpers/runs-log.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';
import { buildSession } from '../helpers/session-builder.js';

/** Task `slow` waits for the file `release`; the others finish at once. */
const kCmd =
  `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" = slow ]; then while [ ! -f release ]; do sleep 0.02; done; fi; ` +
  'echo "done $CSV_WAVE_TASK_ID"';

function slowLine(stdout: string): string | undefined {
  return stdout.split('\n').find((line) => / slow /.test(line));
}

describe('status after kill -9', () => {
  test('a task the killed run left in_progress shows as [INTR], not [RUN]', async () => {
    const dir = buildSession(
      [
        'id,title,description,role,deps,context_from,exec_mode',
        '"a","A","first","r","","","csv-wave"',
        '"slow","Slow","waits for the test","r","","","csv-wave"',
        '',
      ].join('\n'),
      { session: JSON.stringify({ pipeline: 'generic' }) },
    );
    const run = spawnCli('run', dir, '--cmd', kCmd);
    try {
      // a finished and slow started, as the run recorded them (tasks.csv, then its journal).
      await waitFor(() => {
        const rows = parseTasks(readFileSync(join(dir, 'tasks.csv'), 'utf8')).rows;
        replayJournal(rows, readJournal(dir));
        const status = (id: string) => rows.find((row) => row.id === id)?.status;
        return status('a') === 'completed' && status('slow') === 'in_progress';
      }, 'a to finish and slow to start');
      const live = await runCli('status', dir);
      expect(slowLine(live.stdout)).toMatch(/^\[RUN\]\s+slow\s+\(r\)\s+-> running$/);

      run.child.kill('SIGKILL');
      await run.exited;
      const after = await runCli('status', dir);
      expect(after.code).toBe(0);
      expect(slowLine(after.stdout)).toMatch(/^\[INTR\]\s+slow\s+\(r\)\s+-> interrupted: no run holds the lock; resume runs it again$/);
      // a finished before the kill: its result shows, from the journal if not yet in tasks.csv.
      expect(after.stdout).toContain('2 tasks: interrupted 1, completed 1\n');
    } finally {
      // The killed run's command is an orphan: let it end.
      writeFileSync(join(dir, 'release'), '');
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
});
