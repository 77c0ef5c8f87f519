import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { CommandExecutor } from '../../src/executors/command.js';
import type { AttemptOutcome, TaskInput } from '../../src/executors/types.js';
import { writeDiscoveryFile } from '../../src/knowledge/discovery-files.js';
import { buildUpstream } from '../../src/knowledge/upstream.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { resultText } from '../helpers/test-files.js';
import { isRunning } from '../helpers/spawn-cli.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

/** The limits these tests hit are Linux's (128 KiB in one argument). */
const kLinux = process.platform === 'linux';

function sessionDir(): string {
  // realpath: the command's `pwd -P` must match, and /tmp may be a symlink.
  return realpathSync(mkdtempSync(join(tmpdir(), 'csv-wave-command-')));
}

function taskInput(session: string, overrides: Partial<TaskInput> = {}): TaskInput {
  return {
    id: 'T1',
    wave: 3,
    attempt: 2,
    session,
    row: { id: 'T1', title: 'A title', description: 'Do the thing', role: 'critic', deps: '', context_from: '' },
    prev_context: 'No previous context available',
    upstream: { deps: [], wisdom: {}, warnings: [] },
    ...overrides,
  };
}

async function runCommand(
  template: string,
  options: { timeoutMs?: number; task?: Partial<TaskInput>; signal?: AbortSignal; session?: string } = {},
) {
  const session = options.session ?? sessionDir();
  const executor = new CommandExecutor({ template });
  const outcome = await executor.run(taskInput(session, options.task), {
    signal: options.signal ?? new AbortController().signal,
    timeoutMs: options.timeoutMs ?? 0,
  });
  return { outcome, session };
}

function errorOf(outcome: AttemptOutcome): { errorClass: string; error: string } {
  expect(outcome.kind).toBe('error');
  if (outcome.kind !== 'error') throw new Error('unreachable');
  return outcome;
}

/** Polls until `check` holds; `limitMs` is a safety net against a hang, not a timing assertion. */
async function waitUntil(check: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Still waiting for ${what}`);
    await sleep(25);
  }
}

describe('command output', () => {
  test('stdout that is one JSON object is the result', async () => {
    const { outcome } = await runCommand(`printf '%s' '{"status":"completed","findings":"from json","gc_signal":"X"}'`);
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'from json', gc_signal: 'X' } });
  });

  test('a pretty-printed JSON object over several lines is the result too', async () => {
    const { outcome } = await runCommand(`printf '{\\n  "findings": "multi"\\n}\\n'`);
    expect(outcome).toEqual({ kind: 'result', result: { findings: 'multi' } });
  });

  test('otherwise the last non-empty line, when it is a JSON object, is the result', async () => {
    const { outcome } = await runCommand(`echo 'working...'; echo '{"findings":"last line"}'; echo; echo '   '`);
    expect(outcome).toEqual({ kind: 'result', result: { findings: 'last line' } });
  });

  test('plain text is the findings, trimmed', async () => {
    const { outcome } = await runCommand(`printf '\\n  line one\\n  line two  \\n\\n'`);
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'line one\n  line two' } });
  });

  test('a JSON array or a JSON line that is not last is just text', async () => {
    const array = await runCommand(`echo '[1,2]'`);
    expect(array.outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: '[1,2]' } });
    const early = await runCommand(`echo '{"findings":"early"}'; echo 'done'`);
    expect(early.outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: '{"findings":"early"}\ndone' } });
  });

  test('stdout past the cap is cut, and the findings say so', async () => {
    const session = sessionDir();
    const executor = new CommandExecutor({ template: `printf 'abcdefghij%.0s' 1 2 3 4 5`, maxStdoutBytes: 16 });
    const outcome = await executor.run(taskInput(session), { signal: new AbortController().signal, timeoutMs: 0 });
    // The note ends the findings when the attempt is finished (test/hostile/output.test.ts).
    expect(outcome).toEqual({
      kind: 'result',
      result: { status: 'completed', findings: 'abcdefghijabcdef' },
      notes: ['stdout cut: the first 16 of 50 bytes kept, 34 dropped (max_stdout_bytes)'],
    });
  });
});

describe('command failures', () => {
  test('a non-zero exit fails the task with the end of stderr', async () => {
    const { outcome } = await runCommand(`echo 'some output'; echo 'first complaint' >&2; echo 'the real reason' >&2; exit 3`);
    const { errorClass, error } = errorOf(outcome);
    expect(errorClass).toBe('task-failure');
    expect(error).toBe('Command exited with code 3: first complaint\nthe real reason');
  });

  test('only the tail of a long stderr is kept', async () => {
    const { outcome } = await runCommand(`i=0; while [ $i -lt 400 ]; do echo "noise line $i" >&2; i=$((i+1)); done; echo 'THE END' >&2; exit 1`);
    const { error } = errorOf(outcome);
    expect(error.endsWith('THE END')).toBe(true);
    expect(error).not.toContain('noise line 0\n');
    expect(error.length).toBeLessThanOrEqual(2100);
  });

  test('a non-zero exit without stderr still says how it ended', async () => {
    const { outcome } = await runCommand('exit 9');
    expect(errorOf(outcome)).toEqual({ kind: 'error', errorClass: 'task-failure', error: 'Command exited with code 9' });
  });

  test('exit 75 (EX_TEMPFAIL) is a transient failure, which the engine retries', async () => {
    const { outcome } = await runCommand(`echo 'try later' >&2; exit 75`);
    expect(errorOf(outcome)).toEqual({ kind: 'error', errorClass: 'transient', error: 'Command exited with code 75: try later' });
  });

  test('a command killed by a signal says so', async () => {
    const { outcome } = await runCommand('kill -TERM $$');
    const { errorClass, error } = errorOf(outcome);
    expect(errorClass).toBe('task-failure');
    expect(error).toContain('killed by SIGTERM');
  });

  test.runIf(kLinux)('a command line too long for the kernel (E2BIG) fails the task, saying how long it was and to use stdin', async () => {
    const description = 'x'.repeat(200_000);
    const { outcome } = await runCommand('printf %s {description} | wc -c', { task: { row: { id: 'T1', description, role: 'r' } } });
    const { errorClass, error } = errorOf(outcome);
    expect(errorClass).toBe('task-failure');
    expect(error).toContain('E2BIG');
    // The rendered command: the template around the quoted cell.
    expect(error).toContain(`${Buffer.byteLength(`printf %s '${description}' | wc -c`)} bytes`);
    expect(error).toMatch(/Pass big cells on stdin instead/);
    expect(error).not.toContain('xxxx');
  });

  test.runIf(kLinux)('a short command with an environment too big for the kernel (E2BIG) says the environment is the reason', async () => {
    // Variables of 100,000 bytes (each under the 128 KiB of one string) until they pass ARG_MAX.
    const argMax = Number(execFileSync('getconf', ['ARG_MAX'], { encoding: 'utf8' }));
    const names = Array.from({ length: Math.ceil(argMax / 100_000) + 1 }, (_, index) => `CSV_WAVE_TEST_BIG_${index}`);
    for (const name of names) process.env[name] = 'y'.repeat(100_000);
    try {
      const { outcome } = await runCommand('true');
      const { errorClass, error } = errorOf(outcome);
      expect(errorClass).toBe('task-failure');
      expect(error).toMatch(/E2BIG.* it is 4 bytes, which with the environment \(\d+ bytes\) is more than the system takes/);
    } finally {
      for (const name of names) delete process.env[name];
    }
  });

  test.runIf(kLinux)('through a run, an E2BIG command line is one failed attempt with --retries 0 (not a retried worker crash)', async () => {
    // Five cells of 30,000 characters: each fits in a spreadsheet cell, together they pass 128 KiB.
    const cells = Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`part${n}`, 'x'.repeat(30_000)]));
    const dir = buildSession([{ id: 'BIG', description: 'big', role: 'r', ...cells }]);
    const result = await runCli('run', dir, '--cmd', 'printf %s {part1}{part2}{part3}{part4}{part5} | wc -c', '--retries', '0');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/\[FAIL\] BIG .*E2BIG/);
    expect(result.stdout + result.stderr).not.toMatch(/RETRY|worker/i);
    expect(readRows(dir).get('BIG')).toMatchObject({ status: 'failed', error: expect.stringContaining('Pass big cells on stdin instead') });
  });

  test('a command that never reads a large stdin is not an error', async () => {
    const { outcome } = await runCommand('echo fine', { task: { prev_context: 'x'.repeat(2_000_000) } });
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'fine' } });
  });

  test('an abort of the run stops the command as a transient failure', async () => {
    const controller = new AbortController();
    const session = sessionDir();
    // The abort comes once the command runs (it wrote the file), not after a guessed delay.
    const pending = runCommand('touch started; sleep 30', { signal: controller.signal, session });
    await waitUntil(() => existsSync(join(session, 'started')), 'the command to start');
    controller.abort();
    const { outcome } = await pending;
    expect(errorOf(outcome)).toEqual({ kind: 'error', errorClass: 'transient', error: 'Stopped: the run was interrupted' });
  });
});

describe('what a command receives', () => {
  test('stdin holds the task as JSON', async () => {
    const upstream = {
      deps: [{ id: 'D', status: 'completed', findings: 'dep findings', discovery: null, artifacts: [] }],
      wisdom: { 'learnings.md': '- [D] a lesson\n' },
      warnings: [],
    };
    const { outcome, session } = await runCommand('cat > stdin.json; echo ok', {
      task: { prev_context: '[Task D] dep findings', upstream },
    });
    expect(outcome.kind).toBe('result');
    const stdin: unknown = JSON.parse(readFileSync(join(session, 'stdin.json'), 'utf8'));
    expect(stdin).toEqual(taskInput(session, { prev_context: '[Task D] dep findings', upstream }));
  });

  test('env names the session, task, wave, role and attempt; the command runs in the session folder', async () => {
    const { outcome, session } = await runCommand(
      `printf '%s|%s|%s|%s|%s|%s' "$CSV_WAVE_SESSION" "$CSV_WAVE_TASK_ID" "$CSV_WAVE_WAVE" "$CSV_WAVE_ROLE" "$CSV_WAVE_ATTEMPT" "$(pwd -P)"`,
    );
    expect(outcome).toEqual({
      kind: 'result',
      result: { status: 'completed', findings: `${session}|T1|3|critic|2|${session}` },
    });
  });

  test('{prev_context} and extra columns are placeholders', async () => {
    const { outcome } = await runCommand('printf %s {prev_context}/{custom}', {
      task: { prev_context: '[Task A] it works', row: { id: 'T1', role: 'r', custom: 'extra cell' } },
    });
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: '[Task A] it works/extra cell' } });
  });

  test('upstream holds each dependency with its status, findings, discovery file and artifacts, and the wisdom', async () => {
    const long = `${'L'.repeat(600)} end`;
    const dir = buildSession(
      [
        {
          id: 'A',
          role: 'ideator',
          description: resultText({
            findings: long,
            key_findings: ['one key finding'],
            artifacts: [{ name: 'notes', content: '# notes' }],
            wisdom: { learnings: ['A learned this'], decisions: ['A decided that'] },
          }),
        },
        { id: 'B', role: 'failer', description: 'fail' },
        { id: 'C', role: 'reader', description: 'read', deps: 'A', context_from: 'A' },
        { id: 'E', role: 'reader', description: 'read', deps: 'B' },
      ],
    );
    const template = `case {description} in fail) echo broken >&2; exit 2;; read) cat > {id}-stdin.json; echo read;; *) printf %s {description};; esac`;
    const result = await runCli('run', dir, '--cmd', template, '--concurrency', '2');
    expect(result.code).toBe(1);
    const stdin = JSON.parse(readFileSync(join(dir, 'C-stdin.json'), 'utf8')) as TaskInput;
    expect(stdin.id).toBe('C');
    expect(stdin.wave).toBe(2);
    expect(stdin.attempt).toBe(1);
    expect(stdin.session).toBe(realpathSync(dir));
    expect(stdin.row).toMatchObject({ id: 'C', role: 'reader', description: 'read', deps: 'A', context_from: 'A', exec_mode: '' });
    expect(stdin.prev_context).toMatch(/^\[Task A\] L{400}/);
    expect(stdin.upstream.warnings).toEqual([]);
    expect(stdin.upstream.wisdom).toEqual({
      'decisions.md': '- [A] A decided that\n',
      'learnings.md': '- [A] A learned this\n',
    });
    const [dep] = stdin.upstream.deps;
    expect(stdin.upstream.deps).toHaveLength(1);
    expect(dep).toMatchObject({ id: 'A', status: 'completed', artifacts: ['artifacts/A/output.md', 'artifacts/A/notes.md'] });
    expect(dep!.findings.length).toBeLessThanOrEqual(500);
    expect(dep!.findings.endsWith('[… full output: artifacts/A/output.md]')).toBe(true);
    expect(dep!.discovery).toMatchObject({
      task_id: 'A',
      type: 'ideator',
      status: 'completed',
      findings: dep!.findings,
      data: { key_findings: ['one key finding'] },
      artifacts_produced: ['artifacts/A/output.md', 'artifacts/A/notes.md'],
    });
    // E depends on B, which failed: E never ran, so it never read its stdin.
    expect(existsSync(join(dir, 'E-stdin.json'))).toBe(false);
  });

  test('an artifact that a dependency names but that is missing is a warning, not an error', () => {
    const dir = sessionDir();
    writeDiscoveryFile(new SessionWriter(dir), {
      taskId: 'A',
      role: 'r',
      status: 'completed',
      findings: 'f',
      error: null,
      artifacts: ['artifacts/A/gone.md'],
    });
    const upstream = buildUpstream(dir, [
      { id: 'A', status: 'completed', findings: 'f' },
      { id: 'NONE', status: 'completed', findings: '' },
    ]);
    expect(upstream.deps.map((dep) => [dep.id, dep.artifacts, dep.discovery?.task_id ?? null])).toEqual([
      ['A', [], 'A'],
      ['NONE', [], null],
    ]);
    expect(upstream.warnings).toEqual(['Artifact artifacts/A/gone.md of A is missing']);
    rmSync(dir, { recursive: true });
  });
});

describe('command timeout', () => {
  test('a timeout kills the whole process tree, grandchildren included', async () => {
    // The shell starts a background child (a plain sleep) and a grandchild subshell that
    // never ends by itself, records their pids, and waits; only the timeout can end them.
    const { outcome, session } = await runCommand(
      `sleep 30 & echo $! > child.pid; (while :; do sleep 1; done) & echo $! > grandchild.pid; wait`,
      { timeoutMs: 1000 },
    );
    const { errorClass, error } = errorOf(outcome);
    expect(errorClass).toBe('timeout');
    expect(error).toBe('Timed out after 1s; the command and its children were killed');
    for (const name of ['child.pid', 'grandchild.pid']) {
      const pid = Number(readFileSync(join(session, name), 'utf8'));
      expect(pid).toBeGreaterThan(0);
      await waitUntil(() => !isRunning(pid), `${name} (${pid}) to die`);
    }
  });

  test('a command that finishes before its timeout is not touched', async () => {
    const { outcome } = await runCommand('sleep 0.05; echo in time', { timeoutMs: 60_000 });
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'in time' } });
  });
});

const kSetsid = existsSync('/usr/bin/setsid') && existsSync('/proc/self/environ');
let taskCount = 0;

/** A task id no other test uses: the processes of its command are found by it. */
function uniqueTask(): Partial<TaskInput> {
  const id = `LEFT${process.pid}x${++taskCount}`;
  return { id, row: { id, title: 't', description: 'd', role: 'r', deps: '', context_from: '' } };
}

/** Live processes whose environment names this task. */
function processesOf(taskId: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`CSV_WAVE_TASK_ID=${taskId}`);
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isRunning);
}

/** Starts a process that leaves the command's group (setsid) and records its pid in NAME, then waits for the file. */
function escapee(name: string, redirect = ''): string {
  return `setsid sh -c 'echo $$ > ${name}; exec sleep 60' ${redirect} & while [ ! -s ${name} ]; do sleep 0.01; done`;
}

function pidIn(session: string, name: string): number {
  return Number(readFileSync(join(session, name), 'utf8'));
}

describe.runIf(kSetsid)('what a command leaves running', () => {
  test('an abort ends the processes that left the group (setsid) too', async () => {
    const task = uniqueTask();
    const controller = new AbortController();
    const session = sessionDir();
    const running = new CommandExecutor({ template: `${escapee('escaped.pid')}; echo started; sleep 60` }).run(taskInput(session, task), {
      signal: controller.signal,
      timeoutMs: 0,
    });
    await waitUntil(() => existsSync(join(session, 'escaped.pid')) && pidIn(session, 'escaped.pid') > 0, 'the escaped process to start');
    controller.abort();
    expect(errorOf(await running).errorClass).toBe('transient');
    await waitUntil(() => !isRunning(pidIn(session, 'escaped.pid')), 'the escaped process to end');
    // Killed, but a killed process may linger a moment as a zombie until it is reaped.
    await waitUntil(() => processesOf(task.id!).length === 0, 'every process of the task to be gone');
  });

  test('a timeout ends the processes that left the group (setsid) too, and says so', async () => {
    const task = uniqueTask();
    const { outcome, session } = await runCommand(`${escapee('escaped.pid')}; echo started; wait`, { timeoutMs: 3000, task });
    const { errorClass, error } = errorOf(outcome);
    expect(errorClass).toBe('timeout');
    expect(error).toMatch(/^Timed out after 3s; the command and its children were killed/);
    if (existsSync(join(session, 'escaped.pid'))) {
      expect(error).toContain('1 of them outside its process group (setsid), found by their CSV_WAVE_* environment');
      await waitUntil(() => !isRunning(pidIn(session, 'escaped.pid')), 'the escaped process to end');
    }
    // Killed, but a killed process may linger a moment as a zombie until it is reaped.
    await waitUntil(() => processesOf(task.id!).length === 0, 'every process of the task to be gone');
  });

  test('the result is taken when the command exits: a background process holding stdout is ended, not waited for', async () => {
    const task = uniqueTask();
    const { outcome, session } = await runCommand(
      `sh -c 'echo $$ > background.pid; exec sleep 60' & while [ ! -s background.pid ]; do sleep 0.01; done; echo done`,
      { task },
    );
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'done' } });
    await waitUntil(() => !isRunning(pidIn(session, 'background.pid')), 'the background process to end');
    // Killed, but a killed process may linger a moment as a zombie until it is reaped.
    await waitUntil(() => processesOf(task.id!).length === 0, 'every process of the task to be gone');
  }, 30_000);

  test.each([
    ['its output sent elsewhere', '>/dev/null 2>&1 </dev/null'],
    ['holding stdout open', ''],
  ])('a process that left the group (setsid), %s, is ended when the command exits', async (_, redirect) => {
    const task = uniqueTask();
    const { outcome, session } = await runCommand(`${escapee('escaped.pid', redirect)}; echo done`, { task });
    expect(outcome).toEqual({ kind: 'result', result: { status: 'completed', findings: 'done' } });
    await waitUntil(() => !isRunning(pidIn(session, 'escaped.pid')), 'the escaped process to end');
    // Killed, but a killed process may linger a moment as a zombie until it is reaped.
    await waitUntil(() => processesOf(task.id!).length === 0, 'every process of the task to be gone');
  }, 30_000);

  test('one that also cleared its environment cannot be found: the task still ends, and says so', async () => {
    const { outcome, session } = await runCommand(
      `env -i /usr/bin/setsid /bin/sh -c 'echo $$ > hidden.pid; exec /usr/bin/sleep 60' & while [ ! -s hidden.pid ]; do sleep 0.01; done; echo done`,
      { task: uniqueTask() },
    );
    const hidden = pidIn(session, 'hidden.pid');
    try {
      expect(outcome).toMatchObject({ kind: 'result', result: { status: 'completed', findings: 'done' } });
      expect(outcome.notes).toEqual([expect.stringMatching(/still held its output open .*could not find it to end it; it may still run/)]);
      expect(isRunning(hidden)).toBe(true);
    } finally {
      process.kill(hidden, 'SIGKILL');
    }
  }, 30_000);
});
