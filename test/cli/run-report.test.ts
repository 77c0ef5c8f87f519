import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { kScriptedAgentCmd } from '../helpers/scripted-agent.js';
import { spawnCli, waitFor, type SpawnedCli } from '../helpers/spawn-cli.js';

// What `run` prints about the run as a whole: the summary counts what ran, and the wave
// lines come in wave order, each wave started before it is done.

/** The `Wave N: …` and `Wave N done: …` lines, in the order printed. */
function waveLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^Wave \d+(:| done:)/.test(line));
}

/** For waves 1..count: `Wave N: ` then `Wave N done: `, nothing else, in order. */
function expectWavesInOrder(stdout: string, count: number): void {
  const lines = waveLines(stdout).map((line) => line.replace(/^(Wave \d+)(:| done:).*$/, '$1$2'));
  const expected = Array.from({ length: count }, (_, index) => [`Wave ${index + 1}:`, `Wave ${index + 1} done:`]).flat();
  expect(lines, stdout).toEqual(expected);
}

let running: { run: SpawnedCli; dir: string } | undefined;

afterEach(async () => {
  if (!running) return;
  writeFileSync(join(running.dir, 'go'), '');
  running.run.child.kill('SIGKILL');
  await running.run.exited;
  running = undefined;
});

describe('the run summary counts what ran', () => {
  const failFirst = () =>
    buildSession(['f', 'x', 'y', 'z'].map((id) => ({ id, description: id, role: 'r' })));
  const failF = '[ "$CSV_WAVE_TASK_ID" != f ]';

  it('after a halt that left tasks pending: "Ran 1 of 4 task(s)", not 4', async () => {
    const dir = failFirst();
    const result = await runCli('run', dir, '--cmd', failF, '--concurrency', '1', '--retries', '0', '--halt', 'fail=1');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^Ran 1 of 4 task\(s\) in \S+ \(session: completed 0, failed 1, skipped 0, pending 3\)$/m);
    expect(result.stdout).toMatch(/^Halted: 1 task\(s\) failed/m);
  });

  it('--json gives total, ran and attempts, and each failed task with its error class and line', async () => {
    const dir = failFirst();
    const result = await runCli('run', dir, '--cmd', failF, '--concurrency', '1', '--retries', '0', '--halt', 'fail=1', '--json');
    const summary = JSON.parse(result.stdout) as { failed: { id: string; error_class: string; error: string }[] };
    expect(summary).toMatchObject({ total: 4, ran: 1, attempts: 1, stopped: 'halt' });
    expect(summary.failed).toEqual([{ id: 'f', error_class: 'task-failure', error: readRows(dir).get('f')!.error }]);
    expect(summary.failed[0]!.error).toMatch(/exit/i);
  });

  it('a retried task counts each attempt: "Ran 2 task(s) (3 attempts)"', async () => {
    const dir = buildSession([
      { id: 'r', description: 'transient once', role: 'r' },
      { id: 's', description: 'ok', role: 'r' },
    ]);
    // r exits 75 (transient) on its first attempt only.
    const cmd = 'if [ "$CSV_WAVE_TASK_ID" = r ] && [ ! -f r.once ]; then touch r.once; exit 75; fi; echo ok';
    const result = await runCli('run', dir, '--cmd', cmd, '--retries', '1', '--retry-delay', '0');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Ran 2 task\(s\) \(3 attempts\) in /m);
    expect([...readRows(dir).values()].map((row) => row.status)).toEqual(['completed', 'completed']);
  });
});

describe('the failures of the run are listed at the end', () => {
  it('each failed task with its error, above the summary line', async () => {
    const dir = buildSession([
      { id: 'ok1', description: 'ok', role: 'r' },
      { id: 'bad1', description: 'fails', role: 'r' },
      { id: 'bad2', description: 'fails', role: 'r' },
      { id: 'after', description: 'after bad1', role: 'r', deps: 'bad1' },
    ]);
    const cmd = 'case "$CSV_WAVE_TASK_ID" in bad*) echo "no luck for $CSV_WAVE_TASK_ID" >&2; exit 3;; esac; echo ok';
    const result = await runCli('run', dir, '--cmd', cmd, '--concurrency', '1', '--retries', '0');
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    const start = lines.indexOf('Failed in this run (2):');
    expect(start, result.stdout).toBeGreaterThan(-1);
    expect(lines[start + 1]).toMatch(/^ {2}bad1: .*exit.* 3.*no luck for bad1/i);
    expect(lines[start + 2]).toMatch(/^ {2}bad2: .*exit.* 3.*no luck for bad2/i);
    expect(lines[start + 3]).toMatch(/^Ran 3 of 4 task\(s\) in \S+ \(session: completed 1, failed 2, skipped 1, pending 0\)$/);
    expect(start + 3).toBe(lines.length - 1);
  });

  it('a run without failures lists none', async () => {
    const dir = buildSession([{ id: 'ok1', description: 'ok', role: 'r' }]);
    const result = await runCli('run', dir, '--cmd', 'echo ok');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('Failed in this run');
  });
});

/** Whether the run recorded `id` as skipped: in its journal, or in tasks.csv once a checkpoint moved it there. */
function skipJournaled(dir: string, id: string): boolean {
  if (readRows(dir).get(id)?.status === 'skipped') return true;
  const path = join(dir, '.csv-wave', 'journal.ndjson');
  if (!existsSync(path)) return false;
  return readFileSync(path, 'utf8')
    .split('\n')
    .some((line) => line.includes('"type":"finish"') && line.includes(`"id":${JSON.stringify(id)}`) && line.includes('"status":"skipped"'));
}

/** Wave 1: a fails at once, b waits for the file `go`; wave 2: c after a (skipped), and d after b unless left out. */
function skipAheadSession(withD = true): { dir: string; cmd: string } {
  const dir = buildSession([
    { id: 'a', description: 'fails', role: 'r' },
    { id: 'b', description: 'waits for go', role: 'r' },
    { id: 'c', description: 'after a', role: 'r', deps: 'a' },
    ...(withD ? [{ id: 'd', description: 'after b', role: 'r', deps: 'b' }] : []),
  ]);
  const cmd = 'case "$CSV_WAVE_TASK_ID" in a) exit 1;; b) while [ ! -f go ]; do sleep 0.02; done;; esac; echo ok';
  return { dir, cmd };
}

describe('the status cell of a pending task', () => {
  it('reads pending once the run has started, not empty', async () => {
    const { dir, cmd } = skipAheadSession();
    // buildSession leaves the status cells empty.
    expect(readRows(dir).get('d')!.status).toBe('');
    const run = spawnCli('run', dir, '--cmd', cmd, '--concurrency', '2', '--retries', '0');
    running = { run, dir };
    await waitFor(() => skipJournaled(dir, 'c'), 'c to be skipped');
    // b waits for the file go; d, after b, has not started: its cell says so.
    expect(readRows(dir).get('d')!.status).toBe('pending');
    writeFileSync(join(dir, 'go'), '');
    expect((await run.exited).code).toBe(1);
    running = undefined;
  });
});

describe('wave lines come in wave order', () => {
  it('brainstorm: a wave skipped by the GC round that converged is started and done after the wave before it', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-report-')), 'bs');
    expect((await runCli('init', dir, '--template', 'brainstorm', '--topic', 'T', '--cmd', kScriptedAgentCmd)).code).toBe(0);
    const result = await runCli('run', dir);
    expect(result.code, result.stderr).toBe(0);
    const waves = Math.max(...[...readRows(dir).values()].map((row) => Number(row.wave)));
    expectWavesInOrder(result.stdout, waves);
    // The skipped wave has its own lines, with its task counted.
    const skippedWave = readRows(dir).get('IDEA-004')!.wave;
    expect(waveLines(result.stdout)).toContain(`Wave ${skippedWave}: 1 task(s)`);
    expect(waveLines(result.stdout)).toContain(`Wave ${skippedWave} done: 0 completed, 0 failed, 1 skipped`);
  });

  it('a failure that skips the next wave while its own wave still runs: "Wave 2" comes after "Wave 1 done"', async () => {
    const { dir, cmd } = skipAheadSession();
    const run = spawnCli('run', dir, '--cmd', cmd, '--concurrency', '2', '--retries', '0');
    running = { run, dir };
    // c is skipped as soon as a fails, while b still runs; only then may b finish. Its
    // [SKIP] line waits for the header of wave 2, which starts after b.
    await waitFor(() => skipJournaled(dir, 'c'), 'c to be skipped');
    expect(run.stdoutSoFar()).not.toContain('[SKIP] c ');
    writeFileSync(join(dir, 'go'), '');
    const ended = await run.exited;
    running = undefined;
    expect(ended.code, ended.stderr).toBe(1);
    expectWavesInOrder(ended.stdout, 2);
    expect(ended.stdout.indexOf('[SKIP] c ')).toBeGreaterThan(ended.stdout.indexOf('Wave 2: 2 task(s)'));
    expect(waveLines(ended.stdout)).toEqual([
      'Wave 1: 2 task(s)',
      'Wave 1 done: 1 completed, 1 failed, 0 skipped',
      'Wave 2: 2 task(s)',
      'Wave 2 done: 1 completed, 0 failed, 1 skipped',
    ]);
  });

  it('--schedule eager: no start lines, and a wave 2 skipped whole while wave 1 runs is done after it', async () => {
    const { dir, cmd } = skipAheadSession(false);
    const run = spawnCli('run', dir, '--cmd', cmd, '--concurrency', '2', '--retries', '0', '--schedule', 'eager');
    running = { run, dir };
    // No wave headers with eager: the [SKIP] line comes at once.
    await waitFor(() => run.stdoutSoFar().includes('[SKIP] c '), 'c to be skipped');
    writeFileSync(join(dir, 'go'), '');
    const ended = await run.exited;
    running = undefined;
    expect(ended.code, ended.stderr).toBe(1);
    expect(waveLines(ended.stdout)).toEqual([
      'Wave 1 done: 1 completed, 1 failed, 0 skipped',
      'Wave 2 done: 0 completed, 0 failed, 1 skipped',
    ]);
  });
});
