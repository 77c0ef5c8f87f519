import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJournal } from '../../src/session/journal.js';
import { statusOf } from '../../src/core/skip-cause.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { spawnCli } from '../helpers/spawn-cli.js';

// A task's own files (its artifacts, its discovery file) that the session folder cannot
// take: the run stops as for any failed write, and the task is not blamed. A file named
// like the folder stands in the way (ENOTDIR), which holds as root too, where permission
// bits would not.
describe.each([
  { folder: 'artifacts', written: join('artifacts', 'a', 'notes.md'), first: { role: 'r' } },
  { folder: 'discoveries', written: join('discoveries', 'a.json'), first: { role: 'r' } },
  // An explorer's result is cached by the engine's main thread, after the worker replied.
  { folder: 'explorations', written: join('explorations', 'cache-index.json'), first: { role: 'explorer', angle: 'costs' } },
])('$folder/ cannot be written by a task', ({ folder, written, first }) => {
  it('stops the run (exit 1) with the task pending and its dependents not skipped; resume completes everything', async () => {
    const dir = buildSession(
      [
        { id: 'a', description: 'first', ...first },
        { id: 'b', description: 'after a', role: 'r', deps: 'a' },
        { id: 'c', description: 'after b', role: 'r', deps: 'b' },
      ],
      { session: JSON.stringify({ pipeline: 'generic', discovery_files: 'always' }), files: { [folder]: 'in the way\n' } },
    );
    // The script lives outside the session; it logs each run there too, and returns an artifact.
    const tools = mkdtempSync(join(tmpdir(), 'csv-wave-io-'));
    const log = join(tools, 'runs.log');
    writeFileSync(
      join(tools, 'task.sh'),
      `echo "$CSV_WAVE_TASK_ID" >> ${log}\n` +
        `printf '{"status":"completed","findings":"done %s","artifacts":[{"name":"notes","content":"n"}]}\\n' "$CSV_WAVE_TASK_ID"\n`,
    );
    const cmd = `sh ${join(tools, 'task.sh')}`;
    const ran = () => readFileSync(log, 'utf8').trim().split('\n');

    const stopped = await spawnCli('run', dir, '--cmd', cmd, '--concurrency', '1').exited;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stderr).toMatch(/ENOTDIR.*no new task will start/);
    // tasks.csv itself could still be written: it shows the state the run ended in.
    expect(stopped.stdout).toContain('Stopped: csv-wave could not write to the session folder');
    expect(stopped.stdout).toContain(`csv-wave resume ${dir}`);
    // a is not failed but pending, and nothing after it was skipped or started.
    const rows = readRows(dir);
    for (const id of ['a', 'b', 'c']) {
      expect(statusOf(rows.get(id)!), id).toBe('pending');
      expect(rows.get(id)!.error, id).toBe('');
    }
    expect(readJournal(dir).some((entry) => entry.type === 'finish')).toBe(false);
    expect(ran()).toEqual(['a']);

    // The folder can be written again: resume runs everything.
    rmSync(join(dir, folder));
    const resumed = await spawnCli('resume', dir, '--cmd', cmd).exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const [id, row] of readRows(dir)) expect(row, id).toMatchObject({ status: 'completed', findings: `done ${id}` });
    expect(existsSync(join(dir, written))).toBe(true);
    // a's result came back whole before its files could not be written: the cache kept it,
    // and the resume takes it from there (writing its files now) rather than running a again.
    expect(ran()).toEqual(['a', 'b', 'c']);
    rmSync(tools, { recursive: true, force: true });
  });
});
