import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/session/journal.js';
import { statusOf } from '../../src/core/skip-cause.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { isRunning, kBinPath, spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

// Losing stdout (a reader that stops reading, a full disk) must not lose the run: every
// task runs and is recorded, the lock goes, the exit code is the run's own, and no stack
// is printed for what is only an output error.

/** `a` and `b` wait for the file `release`; `c` finishes at once; `d` comes after `a`. */
const kCmd = `${kLogRun}; if [ "$CSV_WAVE_TASK_ID" != c ]; then while [ ! -f release ]; do sleep 0.02; done; fi; echo "ran $CSV_WAVE_TASK_ID"`;

function session(): string {
  return buildSession([
    { id: 'a', description: 'waits', role: 'r' },
    { id: 'b', description: 'waits', role: 'r' },
    { id: 'c', description: 'quick', role: 'r' },
    { id: 'd', description: 'after a', role: 'r', deps: 'a' },
  ]);
}

function expectEverythingRecorded(dir: string): void {
  const rows = readRows(dir);
  for (const id of ['a', 'b', 'c', 'd']) expect(rows.get(id), id).toMatchObject({ status: 'completed', findings: `ran ${id}` });
  expect(Object.fromEntries(countRuns(dir))).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  expect(readJournal(dir)).toEqual([]);
  expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
}

/** No JavaScript stack and no "internal error": an output error is not a bug. */
function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toMatch(/internal error|Uncaught|node:internal/);
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'release'), '');
  running.run.child.kill('SIGKILL');
  await running.run.exited;
  running = undefined;
});

describe('stdout lost during a run', () => {
  it('a pipe closed after the first line (`run s | head -1`): the run goes on to the end, records everything, exits with its own code', async () => {
    const dir = session();
    const run = spawnCli('run', dir, '--cmd', kCmd, '--concurrency', '4');
    running = { run, dir };
    await waitFor(() => run.stdoutSoFar().includes('\n'), 'the first line');
    // The reader goes away: every later write to stdout fails with EPIPE.
    run.child.stdout!.destroy();
    // a and b can only finish now, so their [DONE] lines are written into the closed pipe.
    writeFileSync(join(dir, 'release'), '');
    const ended = await run.exited;
    running = undefined;
    expect(ended.signal).toBeNull();
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toContain('warning: stdout failed (EPIPE): the run goes on without printing there');
    expectNoStack(ended.stderr);
    expectEverythingRecorded(dir);
  });

  it('a failing run whose stdout is closed still exits 1, not 0', async () => {
    const dir = buildSession([
      { id: 'a', description: 'waits', role: 'r' },
      { id: 'b', description: 'fails', role: 'r' },
    ]);
    const cmd = `while [ ! -f release ]; do sleep 0.02; done; [ "$CSV_WAVE_TASK_ID" = a ]`;
    const run = spawnCli('run', dir, '--cmd', cmd, '--concurrency', '2', '--retries', '0');
    running = { run, dir };
    await waitFor(() => run.stdoutSoFar().includes('\n'), 'the first line');
    run.child.stdout!.destroy();
    writeFileSync(join(dir, 'release'), '');
    const ended = await run.exited;
    running = undefined;
    expect(ended.code, ended.stderr).toBe(1);
    expectNoStack(ended.stderr);
    const rows = readRows(dir);
    expect(rows.get('a')!.status).toBe('completed');
    expect(rows.get('b')!.status).toBe('failed');
  });

  it.skipIf(!existsSync('/dev/full'))('stdout on a full disk (`> /dev/full`): no ENOSPC stack; the run goes on to the end and exits 0', async () => {
    const dir = session();
    writeFileSync(join(dir, 'release'), '');
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [kBinPath, 'run', dir, '--cmd', kCmd, '--concurrency', '4'], {
      stdio: ['ignore', full, 'pipe'],
    });
    closeSync(full);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('warning: stdout failed (ENOSPC): the run goes on without printing there');
    expectNoStack(stderr);
    expectEverythingRecorded(dir);
  });
});

/**
 * Runs argv on a pseudo-terminal of its own (python's pty module: Node has none built in),
 * relays what it draws to stdout, hangs the terminal up when a line arrives on stdin (as
 * closing a terminal window does: SIGHUP, then EIO on every write), and prints
 * `{"code": N}` on stderr when the program has exited (-N: ended by signal N).
 */
const kPtyScript = `
import json, os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    ready, _, _ = select.select([fd, sys.stdin], [], [])
    if sys.stdin in ready:
        sys.stdin.readline()
        os.close(fd)
        break
    try:
        data = os.read(fd, 65536)
    except OSError:
        data = b''
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
_, status = os.waitpid(pid, 0)
sys.stderr.write(json.dumps({"code": os.waitstatus_to_exitcode(status)}) + "\\n")
`;

const kHasPty = spawnSync('python3', ['-c', 'import pty'], { stdio: 'ignore' }).status === 0;

describe('the terminal closes during a run', () => {
  it.skipIf(!kHasPty)('a hang-up stops the run like SIGTERM: running commands are stopped after the grace, everything is written, the lock goes; exit 129', async () => {
    const dir = buildSession([
      { id: 'a', description: 'waits', role: 'r' },
      { id: 'b', description: 'waits', role: 'r' },
      { id: 'c', description: 'after a', role: 'r', deps: 'a' },
    ]);
    const cmd = `${kLogRun}; echo $$ > "$CSV_WAVE_TASK_ID.pid"; while [ ! -f release ]; do sleep 0.02; done; echo "ran $CSV_WAVE_TASK_ID"`;
    const helper = spawn('python3', ['-c', kPtyScript, process.execPath, kBinPath, 'run', dir, '--cmd', cmd, '--concurrency', '2', '--grace', '0.5'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let drawn = '';
    let report = '';
    helper.stdout.setEncoding('utf8').on('data', (text: string) => (drawn += text));
    helper.stderr.setEncoding('utf8').on('data', (text: string) => (report += text));
    const ended = new Promise<void>((resolve) => helper.on('close', () => resolve()));
    try {
      const pidOf = (id: string) => (existsSync(join(dir, `${id}.pid`)) ? Number(readFileSync(join(dir, `${id}.pid`), 'utf8')) : 0);
      await waitFor(() => pidOf('a') > 0 && pidOf('b') > 0, 'a and b to start');
      // It ran on a terminal: the live bar was drawn.
      await waitFor(() => drawn.includes('running'), 'the live bar');
      const commands = [pidOf('a'), pidOf('b')];
      helper.stdin.write('hang up\n');
      await ended;
      expect(JSON.parse(report.trim().split('\n').at(-1)!), report).toEqual({ code: 129 });
      const rows = readRows(dir);
      for (const id of ['a', 'b']) expect(rows.get(id), id).toMatchObject({ status: 'pending', findings: '', error: '' });
      expect(statusOf(rows.get('c')!)).toBe('pending');
      expect(readJournal(dir)).toEqual([]);
      expect(existsSync(join(dir, '.csv-wave', 'lock'))).toBe(false);
      await waitFor(() => !commands.some(isRunning), 'the stopped commands to be gone');
    } finally {
      writeFileSync(join(dir, 'release'), '');
      helper.kill('SIGKILL');
    }
  });
});
