import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readTasksFile } from '../../src/csv/parse-tasks.js';
import { buildSession } from '../helpers/session-builder.js';
import { spawnCli } from '../helpers/spawn-cli.js';

// A real full disk: a small tmpfs (root only). On a disk that fills up part way, write(2)
// writes fewer bytes than asked and says so only by its count; the next write fails.
const kRows = 3000;
/**
 * Room for a finished run of the bigger session (its file twice, the wave file, the journal,
 * and the result cache's entries: about 2 KB a task) once the filler is gone.
 */
const kDiskBytes = 16 * 1024 * 1024;

let mountPoint: string | undefined;
let mountProblem: string | undefined;

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kDiskBytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    mountPoint = dir;
  } catch (error) {
    mountProblem = (error as Error).message;
    // CI runs as root: there a test that cannot mount is a broken test, not one to skip.
    if (process.env['CI'] === 'true') throw new Error(`Cannot mount a tmpfs for the full-disk test: ${mountProblem}`);
  }
});

afterEach(() => {
  // A failed test must not leave the disk full for the next one.
  if (mountPoint !== undefined) for (const name of readdirSync(mountPoint)) rmSync(join(mountPoint, name), { recursive: true, force: true });
});

afterAll(() => {
  if (mountPoint !== undefined) execFileSync('umount', ['-l', mountPoint]);
});

function freeBytes(dir: string): number {
  const stat = statfsSync(dir);
  return stat.bavail * stat.bsize;
}

/**
 * A session on the tmpfs whose tasks run in the workers (a module: no process per task),
 * write no discovery files, and print `findingsChars` characters each.
 */
function sessionOnDisk(name: string, findingsChars: number): string {
  const rows = Array.from({ length: kRows }, (_, i) => ({
    id: `T${String(i).padStart(4, '0')}`,
    description: `task number ${i} of the full-disk test`,
    role: 'worker',
  }));
  return buildSession(rows, {
    dir: join(mountPoint!, name),
    files: { 'task.mjs': `export default async (task) => ({ status: 'completed', findings: 'done ' + task.id + ' ' + 'x'.repeat(${findingsChars}) });\n` },
    session: { pipeline: 'generic', discovery_files: 'when-rich', executor: { type: 'module', module: 'task.mjs' } },
  });
}

/** Fills the disk until `leave` bytes are free. */
function fillDisk(leave: number): string {
  const filler = join(mountPoint!, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(mountPoint!) - leave)));
  return filler;
}

describe('a full disk', () => {
  it('stops a run whose rewrite of tasks.csv does not fit: exit 1, tasks.csv kept whole, resume completes once there is room', async (context) => {
    if (mountPoint === undefined) return context.skip(`cannot mount a tmpfs here (${mountProblem}); CI=true makes this a failure`);
    const dir = sessionOnDisk('before-run', 20);
    const path = join(dir, 'tasks.csv');
    const before = readFileSync(path);
    const filler = fillDisk(Math.floor(before.length / 2));

    const run = await spawnCli('run', dir).exited;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Cannot write .*tasks\.csv.*(ENOSPC|no space|disk full)/i);
    expect(run.stderr).toContain('Nothing was run');
    expect(readFileSync(path)).toEqual(before);
    expect(readTasksFile(path).rows).toHaveLength(kRows);

    rmSync(filler);
    const resume = await spawnCli('resume', dir).exited;
    expect(resume.stderr).toBe('');
    expect(resume.code).toBe(0);
    const rows = readTasksFile(path).rows;
    expect(rows).toHaveLength(kRows);
    expect(rows.every((row) => row.status === 'completed' && row.findings.startsWith(`done ${row.id} `))).toBe(true);
  });

  it('stops a run whose disk fills up while tasks finish: exit 1, tasks.csv whole with every row, resume completes', async (context) => {
    if (mountPoint === undefined) return context.skip(`cannot mount a tmpfs here (${mountProblem}); CI=true makes this a failure`);
    // Each task prints 450 characters: the file more than doubles while the run goes.
    const dir = sessionOnDisk('during-run', 450);
    const path = join(dir, 'tasks.csv');
    // Room for the first rewrite and the wave file, not for the finished file (about 1.37 MB)
    // and its temporary copy: some rewrite while tasks finish must fail.
    const filler = fillDisk(2_700_000);

    const run = await spawnCli('run', dir).exited;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/(ENOSPC|no space|disk full)/i);
    const rows = readTasksFile(path).rows;
    expect(rows).toHaveLength(kRows);
    // The finished file cannot fit: the run did not end as if it did.
    expect(rows.filter((row) => row.status === 'completed').length).toBeLessThan(kRows);

    rmSync(filler);
    const resume = await spawnCli('resume', dir).exited;
    expect(resume.code, resume.stderr + resume.stdout.slice(-3000)).toBe(0);
    const after = readTasksFile(path).rows;
    expect(after).toHaveLength(kRows);
    expect(after.every((row) => row.status === 'completed' && row.findings.startsWith(`done ${row.id} `))).toBe(true);
  });
});
