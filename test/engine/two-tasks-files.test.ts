import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import { buildSession, tasksCsv } from '../helpers/session-builder.js';
import { spawnCli } from '../helpers/spawn-cli.js';

// Two .csv files in one folder: the session's state (journal, lock, wave files, artifacts,
// discoveries) is the folder's, so it belongs to the tasks file that ran there first, and
// a second one is refused, never given the first one's results.

/** Each task's description is its shell script. */
const kCmd = 'sh -c {description}';

function folder(files: Record<string, string>): string {
  return buildSession(null, { files, prefix: 'csv-wave-two-files-' });
}

function rowsOf(path: string): Map<string, { status: string; findings: string }> {
  return new Map(readTasksFile(path).rows.map((row) => [row.id, { status: row.status, findings: row.findings }]));
}

describe('a second tasks file in a session folder', () => {
  it('is refused (exit 2, naming the owner) after a kill -9 left the first one\'s journal, which resume applies to the first', async () => {
    // In a.csv, Y kills its own run once X's result is recorded (in the journal, or in a.csv
    // after a checkpoint); the pattern `from-[a]` does not match its own text in a.csv. The
    // run is the parent of the launcher process that started the template's shell.
    const a = tasksCsv([
      { id: 'X', description: "printf 'from-%s' a", role: 'r' },
      {
        id: 'Y',
        description:
          "if [ ! -e killed ]; then : > killed; until grep -q 'from-[a]' .csv-wave/journal.ndjson a.csv 2>/dev/null; do :; done; launcher=$(cut -d' ' -f4 /proc/$PPID/stat); kill -9 $(cut -d' ' -f4 /proc/$launcher/stat); fi; printf y-a",
        role: 'r',
        deps: 'X',
      },
    ]);
    const b = tasksCsv([
      { id: 'X', description: "printf 'from-%s' b", role: 'r' },
      { id: 'Y', description: 'printf y-b', role: 'r', deps: 'X' },
    ]);
    const dir = folder({ 'a.csv': a, 'b.csv': b });

    const killed = await spawnCli('run', join(dir, 'a.csv'), '--cmd', kCmd).exited;
    expect(killed.signal).toBe('SIGKILL');

    const second = await spawnCli('run', join(dir, 'b.csv'), '--cmd', kCmd).exited;
    expect(second.stderr).toMatch(/b\.csv: the session in .* belongs to a\.csv .*Move b\.csv into a folder of its own/);
    expect(second.code).toBe(2);
    expect(readFileSync(join(dir, 'b.csv'), 'utf8')).toBe(b);
    // status and report apply the folder's journal: they refuse b.csv rather than show it
    // with a.csv's result for X; status of a.csv shows that result.
    for (const command of ['status', 'report']) {
      const refused = await spawnCli(command, join(dir, 'b.csv'), '--json').exited;
      expect(refused.code, command).toBe(2);
      // With --json the error is the JSON document on stdout.
      expect(refused.stdout + refused.stderr).toMatch(/belongs to a\.csv/);
      expect(refused.stdout).not.toMatch(/from-a/);
    }
    const status = await spawnCli('status', join(dir, 'a.csv'), '--json').exited;
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/from-a/);

    const resumed = await spawnCli('resume', join(dir, 'a.csv'), '--cmd', kCmd).exited;
    expect(resumed.code).toBe(0);
    expect(rowsOf(join(dir, 'a.csv'))).toEqual(
      new Map([
        ['X', { status: 'completed', findings: 'from-a' }],
        ['Y', { status: 'completed', findings: 'y-a' }],
      ]),
    );
    // Moved to a folder of its own, b.csv runs with its own results.
    const own = folder({ 'b.csv': b });
    const alone = await spawnCli('run', join(own, 'b.csv'), '--cmd', kCmd).exited;
    expect(alone.code).toBe(0);
    expect(rowsOf(join(own, 'b.csv')).get('X')).toEqual({ status: 'completed', findings: 'from-b' });
  });

  it('is refused by every command that uses the session state (run, resume, rerun, revise), and the folder still runs its own', async () => {
    const csv = tasksCsv([{ id: 'X', description: 'printf done', role: 'r' }]);
    const dir = folder({ 'tasks.csv': csv, 'other.csv': csv });
    expect((await spawnCli('run', dir, '--cmd', kCmd).exited).code).toBe(0);
    expect(readFileSync(join(dir, '.csv-wave', 'tasks-file'), 'utf8')).toBe('tasks.csv\n');

    const other = join(dir, 'other.csv');
    for (const argv of [
      ['run', other, '--cmd', kCmd],
      ['resume', other, '--cmd', kCmd],
      ['rerun', other, '--task', 'X', '--cmd', kCmd],
      ['rerun', other, '--task', 'X', '--dry-run'],
      ['revise', other, 'X', '--feedback', 'more'],
    ]) {
      const result = await spawnCli(...argv).exited;
      expect({ argv, code: result.code, stderr: result.stderr }).toMatchObject({ code: 2, stderr: expect.stringContaining('belongs to tasks.csv') });
    }
    expect(readFileSync(other, 'utf8')).toBe(csv);
    expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
    expect((await spawnCli('rerun', dir, '--task', 'X', '--cmd', kCmd).exited).code).toBe(0);
  });
});
