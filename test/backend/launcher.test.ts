/**
 * Commands run from launcher processes (src/backend/local/launcher*.ts): each attempt gets
 * its own reply, a launcher that dies or whose pipe closes fails only its own attempts (as
 * worker crashes) and a fresh one runs the next, an aborted attempt's process group ends.
 * Commands say they have started by writing their pid to a file; the tests wait on those
 * files and on processes, never on time.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, onTestFinished, test, vi } from 'vitest';
import { Launcher } from '../../src/backend/local/launcher.js';
import { LocalBackend } from '../../src/backend/local/local-backend.js';
import type { AttemptRequest } from '../../src/executors/messages.js';
import { procStatFields } from '../../src/process/proc-stat.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { expectEnded, isRunning, startedPid, waiter } from '../helpers/waiting-commands.js';
import { spawnCli, waitFor } from '../helpers/spawn-cli.js';

const backends: LocalBackend[] = [];
afterEach(async () => {
  for (const backend of backends.splice(0)) {
    await backend.cancelAll();
    await backend.close();
  }
});

function localBackend(sessionDir: string): LocalBackend {
  const backend = new LocalBackend({ sessionDir, threads: 1, tasksPerThread: 4, workerMemoryMb: 256, endpointConcurrency: undefined });
  backends.push(backend);
  return backend;
}

function request(session: string, id: string, template: string, more: Partial<AttemptRequest> = {}): AttemptRequest {
  return {
    executor: { type: 'command', template },
    task: { id, wave: 1, attempt: 1, session, row: { id, role: 'r', description: id }, prev_context: '', upstream: { deps: [], wisdom: {}, warnings: [] } },
    timeoutMs: 0,
    ...more,
  };
}

/** Killed: gone, or a zombie that its new parent has not reaped yet. */
const isKilled = (pid: number) => !isRunning(pid) || procStatFields(pid)?.[0] === 'Z';


/** The parent of a process: for a command's shell, the launcher that started it. */
const parentOf = (pid: number) => Number(procStatFields(pid)?.[1]);

const dirs = () => ({ session: mkdtempSync(join(tmpdir(), 'csv-wave-launcher-')), marks: mkdtempSync(join(tmpdir(), 'csv-wave-marks-')) });
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
const onLinux = process.platform === 'linux';

describe('commands on a launcher', () => {
  test('many attempts sent at once each get their own reply', async () => {
    const { session } = dirs();
    const backend = localBackend(session);
    const ids = Array.from({ length: 60 }, (_, index) => `T${index}`);
    // Each prints its id and the id its stdin holds, after a delay that mixes the finishing order.
    const replies = await Promise.all(
      ids.map((id, index) =>
        backend.submit(request(session, id, `sleep 0.0${index % 10}; printf '%s ' {id}; cut -c1-40 | grep -o '"id":"[^"]*"'`)),
      ),
    );
    for (const [index, reply] of replies.entries()) {
      expect(reply).toMatchObject({ kind: 'finished', findings: `${ids[index]} "id":"${ids[index]}"` });
    }
  });

  test.runIf(onLinux)('a launcher killed under its attempts fails each as a worker crash, ends their commands, and a fresh launcher runs the next', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    const submits = ['A', 'B', 'C'].map((id) => backend.submit(request(session, id, waiter(marks, id))));
    const pids = [await startedPid(marks, 'A'), await startedPid(marks, 'B'), await startedPid(marks, 'C')];
    const launcher = parentOf(pids[0]!);
    expect(pids.map(parentOf)).toEqual([launcher, launcher, launcher]);
    expect(launcher).not.toBe(process.pid);
    process.kill(launcher, 'SIGKILL');
    for (const reply of await Promise.all(submits)) {
      expect(reply).toMatchObject({ kind: 'error', errorClass: 'worker-crash', error: expect.stringMatching(/^Command launcher was killed by SIGKILL/) });
    }
    // Orphaned when their launcher died (their parent is now init, which reaps them in its own time): killed all the same.
    for (const pid of pids) await vi.waitFor(() => expect(isKilled(pid)).toBe(true), { timeout: 60_000, interval: 20 });
    const next = backend.submit(request(session, 'D', waiter(marks, 'D')));
    const pidD = await startedPid(marks, 'D');
    expect([launcher, process.pid]).not.toContain(parentOf(pidD));
    process.kill(pidD, 'SIGKILL');
    await expect(next).resolves.toMatchObject({ kind: 'error', errorClass: 'task-failure' });
  });

  test.runIf(onLinux)('an isolated attempt runs on a launcher of its own: when it kills its launcher, the others run on', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    const other = backend.submit(request(session, 'B', waiter(marks, 'B')));
    const pidB = await startedPid(marks, 'B');
    const killer = backend.submit(request(session, 'A', 'kill -9 $PPID; sleep 600', { isolated: true }));
    await expect(killer).resolves.toMatchObject({ kind: 'error', errorClass: 'worker-crash' });
    expect(isRunning(pidB)).toBe(true);
    expect(isRunning(parentOf(pidB))).toBe(true);
    process.kill(pidB, 'SIGKILL');
    await expect(other).resolves.toMatchObject({ kind: 'error', errorClass: 'task-failure' });
  });

  test.runIf(onLinux)('a launcher lives on through the signals a terminal sends its whole group: the engine decides what they stop', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    const go = join(marks, 'go');
    const submit = backend.submit(request(session, 'A', `echo $$ > '${join(marks, 'A.pid')}'; while [ ! -e '${go}' ]; do sleep 0.01; done; echo finished`));
    const launcher = parentOf(await startedPid(marks, 'A'));
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(launcher, signal);
    writeFileSync(go, '');
    await expect(submit).resolves.toMatchObject({ kind: 'finished', findings: 'finished' });
    expect(isRunning(launcher)).toBe(true);
  });

  test.runIf(onLinux)('aborting one attempt ends its whole process group, not the others', async () => {
    const { session, marks } = dirs();
    const backend = localBackend(session);
    const abort = new AbortController();
    const withChild = `sh -c "echo \\$\\$ > '${join(marks, 'child.pid')}'; exec sleep 600" & ${waiter(marks, 'A')}`;
    const aborted = backend.submit(request(session, 'A', withChild), abort.signal);
    const other = backend.submit(request(session, 'B', waiter(marks, 'B')));
    const [pidA, child, pidB] = [await startedPid(marks, 'A'), await startedPid(marks, 'child'), await startedPid(marks, 'B')];
    expect(parentOf(pidA)).not.toBe(process.pid);
    abort.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await expectEnded(pidA);
    await expectEnded(child);
    expect(isRunning(pidB)).toBe(true);
    process.kill(pidB, 'SIGKILL');
    await expect(other).resolves.toMatchObject({ kind: 'error', errorClass: 'task-failure' });
  });
});

describe('the launcher end of the pipes', () => {
  test('a launcher that closes its reply pipe and lives on fails its attempt as a worker crash, and is ended', async () => {
    const { session } = dirs();
    const launcher = new Launcher(fixture('launcher-closes-pipe.mjs'));
    const pid = launcher.pid!;
    await expect(launcher.run(request(session, 'A', 'true'))).resolves.toMatchObject({ kind: 'error', errorClass: 'worker-crash' });
    await launcher.exited;
    expect(isRunning(pid)).toBe(false);
    expect(launcher.usable).toBe(false);
  });

  test('a reply line that does not read fails its own task only', async () => {
    const { session } = dirs();
    const launcher = new Launcher(fixture('launcher-bad-reply.mjs'));
    const bad = request(session, 'A', 'true');
    bad.task.row.description = 'garbage';
    const [first, second] = await Promise.all([launcher.run(bad), launcher.run(request(session, 'B', 'true'))]);
    expect(first).toMatchObject({ kind: 'error', errorClass: 'invalid-output' });
    expect(second).toEqual({ kind: 'error', errorClass: 'task-failure', error: 'ran B' });
    await launcher.end();
  });
});

describe.runIf(onLinux)('a run whose launcher is killed', () => {
  test('retries the attempts it had on launchers of their own, runs the rest on a fresh one, and completes', async () => {
    const marks = mkdtempSync(join(tmpdir(), 'csv-wave-marks-'));
    const ids = ['A', 'B', 'C', 'D', 'E', 'F'];
    const dir = buildSession(ids.map((id) => ({ id, description: id, role: 'r' })));
    // Each attempt writes its shell's pid to <id>.<attempt>, then waits for the go file.
    const command = `echo $$ > '${marks}'/{id}.$CSV_WAVE_ATTEMPT; while [ ! -e '${marks}/go' ]; do sleep 0.01; done; echo done {id}`;
    const run = spawnCli('run', dir, '--cmd', command, '--concurrency', '3');
    // Whatever fails below, the run and its commands do not outlive the test.
    onTestFinished(() => {
      writeFileSync(join(marks, 'go'), '');
      run.child.kill('SIGKILL');
    });
    const started = () => ids.filter((id) => existsSync(join(marks, `${id}.1`)) && readFileSync(join(marks, `${id}.1`), 'utf8').endsWith('\n'));
    await waitFor(() => started().length === 3, 'three tasks to start');
    const first = started();
    const launcher = parentOf(Number(readFileSync(join(marks, `${first[0]}.1`), 'utf8')));
    expect(launcher).not.toBe(run.child.pid);
    process.kill(launcher, 'SIGKILL');
    // The free slots go to the tasks not started yet, on a fresh launcher.
    const rest = ids.filter((id) => !first.includes(id));
    await waitFor(() => started().length === 6, 'the other three tasks to start');
    for (const id of rest) expect([launcher, run.child.pid]).not.toContain(parentOf(Number(readFileSync(join(marks, `${id}.1`), 'utf8'))));
    writeFileSync(join(marks, 'go'), '');
    const { code, stdout } = await run.exited;
    expect(code).toBe(0);
    expect(stdout).toMatch(/attempt 1 failed \(worker-crash\): Command launcher was killed by SIGKILL/);
    const rows = readRows(dir);
    for (const id of ids) expect(rows.get(id)).toMatchObject({ status: 'completed', findings: `done ${id}` });
    // The crashed ones ran once more (as the retry after a crash, on a launcher of their own); the others once.
    for (const id of first) expect(existsSync(join(marks, `${id}.2`))).toBe(true);
    for (const id of rest) expect(existsSync(join(marks, `${id}.2`))).toBe(false);
  });
});
