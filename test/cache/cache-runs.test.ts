import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runSession } from '../../src/run/run-session.js';
import { RunEmitter } from '../../src/events/events.js';
import { readAttempts } from '../../src/knowledge/attempt-lines.js';
import { runCli } from '../helpers/cli.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';

// Issue 25 items 2-4: when a run takes a result from the cache, early cutoff through a
// chain, the tasks each rerun executes (counted in runs.log, which every execution appends
// to), stale tasks, and the tasks a rerun forced kept across an interruption.

/**
 * Each execution is logged; a task fails while `fail/<id>` exists, waits while `hold/<id>`
 * exists, and prints `out/<id>` when there is one, else `done <id>`.
 */
const kCmd =
  `${kLogRun}; ` +
  'while [ -e "hold/$CSV_WAVE_TASK_ID" ]; do sleep 0.05; done; ' +
  'if [ -e "fail/$CSV_WAVE_TASK_ID" ]; then echo "$CSV_WAVE_TASK_ID broke" >&2; exit 1; fi; ' +
  'if [ -e "out/$CSV_WAVE_TASK_ID" ]; then cat "out/$CSV_WAVE_TASK_ID"; else echo "done $CSV_WAVE_TASK_ID"; fi';

/** A → B → C, each reading its dependency's findings (context_from); X alone. */
const kChain: RowInput[] = [
  { id: 'A', description: 'first', role: 'r' },
  { id: 'B', description: 'second', role: 'r', deps: 'A', context_from: 'A' },
  { id: 'C', description: 'third', role: 'r', deps: 'B', context_from: 'B' },
  { id: 'X', description: 'alone', role: 'other' },
];

function session(rows: readonly RowInput[] = kChain, config: Record<string, unknown> = {}): string {
  const dir = buildSession(rows, { session: { pipeline: 'generic', executor: { type: 'command', cmd: kCmd }, ...config } });
  for (const folder of ['out', 'fail', 'hold']) mkdirSync(join(dir, folder));
  return dir;
}

function put(dir: string, file: string, text = ''): void {
  writeFileSync(join(dir, file), text);
}

function runs(dir: string): Record<string, number> {
  return Object.fromEntries(countRuns(dir));
}

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await runCli(...argv);
  return result;
}

/** The ids the run printed as [CACHED], in order. */
function cachedIn(stdout: string): string[] {
  return [...stdout.matchAll(/^\[CACHED\] (\S+)/gm)].map((match) => match[1]!);
}

describe('early cutoff', () => {
  test('A → B → C: rerun A with the same findings takes B and C from the cache; with new findings B runs, and C comes from the cache when B\'s findings are the same', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    expect(runs(dir)).toEqual({ A: 1, B: 1, C: 1, X: 1 });

    const same = await cli('rerun', dir, '--task', 'A');
    expect(same.code, same.stderr).toBe(0);
    expect(runs(dir)).toEqual({ A: 2, B: 1, C: 1, X: 1 });
    expect(cachedIn(same.stdout)).toEqual(['B', 'C']);
    expect(same.stdout).toMatch(/^\[CACHED\] B \(wave 2, from the cache\) -> done B$/m);
    expect(same.stdout).toMatch(/Ran 3 task\(s\) \(2 task\(s\) from the cache\)/);

    put(dir, 'out/A', 'A says something new');
    const changed = await cli('rerun', dir, '--task', 'A');
    expect(changed.code, changed.stderr).toBe(0);
    expect(runs(dir)).toEqual({ A: 3, B: 2, C: 1, X: 1 });
    expect(cachedIn(changed.stdout)).toEqual(['C']);
    const rows = readRows(dir);
    expect(rows.get('A')!.findings).toBe('A says something new');
    expect(rows.get('C')).toMatchObject({ status: 'completed', findings: 'done C' });
  });

  test('a cached result takes the way of an executed one: its artifacts and discovery file are written again, and its attempts.ndjson line says cached', async () => {
    const long = 'x'.repeat(700);
    const dir = session();
    put(dir, 'out/B', long);
    expect((await cli('run', dir)).code).toBe(0);
    rmSync(join(dir, 'artifacts'), { recursive: true });
    rmSync(join(dir, 'discoveries'), { recursive: true });
    expect((await cli('rerun', dir, '--task', 'A')).code).toBe(0);
    expect(runs(dir)['B']).toBe(1);
    expect(readFileSync(join(dir, 'artifacts', 'B', 'output.md'), 'utf8')).toBe(long);
    expect(existsSync(join(dir, 'discoveries', 'B.json'))).toBe(true);
    const lines = readAttempts(dir);
    const last = (id: string) => lines.filter((line) => line.task === id).at(-1)!;
    expect(last('B')).toMatchObject({ outcome: 'completed', cached: true, saved_usd: 0, prompt_tokens: 0, completion_tokens: 0, thread: null });
    expect(last('A').cached).toBeUndefined();
    expect(last('A').key).toMatch(/^[0-9a-f]{64}$/);
    // The key of a result and the key it was found with are one.
    expect(last('B').key).toBe(lines.filter((line) => line.task === 'B')[0]!.key);
  });
});

describe('which tasks a rerun executes', () => {
  test('--wave N: its tasks execute; the tasks below them come from the cache when their inputs are unchanged', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    const rerun = await cli('rerun', dir, '--wave', '1');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(runs(dir)).toEqual({ A: 2, B: 1, C: 1, X: 2 });
    expect(cachedIn(rerun.stdout)).toEqual(['B', 'C']);
  });

  test('--failed: the failed tasks execute, the tasks skipped because of them come from the cache', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    put(dir, 'fail/B');
    expect((await cli('rerun', dir, '--task', 'B')).code).toBe(1);
    expect(readRows(dir).get('C')).toMatchObject({ status: 'skipped' });
    rmSync(join(dir, 'fail/B'));
    const rerun = await cli('rerun', dir, '--failed');
    expect(rerun.code, rerun.stderr).toBe(0);
    // B: its first run, the failure, and now; C: only its first run (its cached result).
    expect(runs(dir)).toEqual({ A: 1, B: 3, C: 1, X: 1 });
    expect(cachedIn(rerun.stdout)).toEqual(['C']);
  });

  test('a failed result is never cached: the task executes again', async () => {
    const dir = session();
    put(dir, 'fail/X');
    expect((await cli('run', dir)).code).toBe(1);
    const packs = join(dir, '.csv-wave', 'cache', 'packs');
    const packed = readdirSync(packs).filter((name) => name.endsWith('.pack')).map((name) => readFileSync(join(packs, name), 'utf8')).join('');
    expect(packed).not.toContain('"task":"X"');
    rmSync(join(dir, 'fail/X'));
    expect((await cli('rerun', dir, '--failed')).code).toBe(0);
    expect(runs(dir)['X']).toBe(2);
  });

  test('--no-cache executes every task; --cache read takes results and writes none', async () => {
    const dir = session();
    const first = await cli('run', dir, '--cache', 'read');
    expect(first.code).toBe(0);
    expect(existsSync(join(dir, '.csv-wave', 'cache'))).toBe(false);
    expect((await cli('rerun', dir, '--task', 'A')).code).toBe(0);
    // Nothing was cached by the first run: B and C ran again, and are cached now.
    expect(runs(dir)).toEqual({ A: 2, B: 2, C: 2, X: 1 });
    const packs = () => readdirSync(join(dir, '.csv-wave', 'cache', 'packs')).sort();
    const before = packs();
    const read = await cli('rerun', dir, '--task', 'A', '--cache', 'read');
    expect(read.code).toBe(0);
    expect(cachedIn(read.stdout)).toEqual(['B', 'C']);
    expect(packs()).toEqual(before);
    const none = await cli('rerun', dir, '--task', 'A', '--no-cache');
    expect(none.code).toBe(0);
    expect(cachedIn(none.stdout)).toEqual([]);
    expect(runs(dir)).toEqual({ A: 4, B: 3, C: 3, X: 1 });
  });

  test('"cache": false in session.json executes every task; in a role\'s entry, that role\'s tasks', async () => {
    const off = session(kChain, { cache: false });
    expect((await cli('run', off)).code).toBe(0);
    expect((await cli('rerun', off, '--task', 'A')).code).toBe(0);
    expect(runs(off)).toEqual({ A: 2, B: 2, C: 2, X: 1 });
    expect(existsSync(join(off, '.csv-wave', 'cache'))).toBe(false);

    const rows = kChain.map((row) => (row.id === 'B' ? { ...row, role: 'fresh' } : row));
    const role = session(rows, { roles: { fresh: { cache: false } } });
    expect((await cli('run', role)).code).toBe(0);
    const rerun = await cli('rerun', role, '--task', 'A');
    expect(rerun.code).toBe(0);
    expect(runs(role)).toEqual({ A: 2, B: 2, C: 1, X: 1 });
    expect(cachedIn(rerun.stdout)).toEqual(['C']);
  });

  test('an unknown key in a role\'s entry is still an error at its line', async () => {
    const dir = buildSession(kChain, { session: '{\n  "pipeline": "generic",\n  "roles": { "r": { "cache": false, "cahce": true } }\n}\n' });
    const run = await cli('run', dir, '--cmd', 'true');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/session\.json:3:.*cahce/);
  });
});

describe('stale tasks', () => {
  test('an edit of a completed row makes it [STALE] with what changed; rerun --stale executes exactly it, its dependents from the cache', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    const text = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    writeFileSync(join(dir, 'tasks.csv'), text.replace('"second"', '"second, reworded"'));
    const status = await cli('status', dir);
    expect(status.stdout).toMatch(/^\[STALE\] +B +\(r\) +-> description changed$/m);
    expect(status.stdout).toMatch(/^\[DONE\] +C /m);
    expect(status.stdout).toContain('completed 4 (1 stale)');
    const json = JSON.parse((await cli('status', dir, '--json')).stdout) as { stale?: Record<string, string[]> };
    expect(json.stale).toEqual({ B: ['description changed'] });

    const dry = await cli('rerun', dir, '--stale', '--dry-run');
    expect(dry.stdout).toBe('Would reset 2 task(s):\n  B (stale: description changed)\n  C (dependent)\n');
    const rerun = await cli('rerun', dir, '--stale');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(runs(dir)).toEqual({ A: 1, B: 2, C: 1, X: 1 });
    expect(cachedIn(rerun.stdout)).toEqual(['C']);
    expect((await cli('status', dir)).stdout).not.toContain('[STALE]');
  });

  test('a dependency that ran again with new findings makes its dependents stale: prev_context changed because of its findings', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    put(dir, 'out/A', 'A, revised');
    expect((await cli('rerun', dir, '--task', 'A', '--no-cascade')).code).toBe(0);
    const json = JSON.parse((await cli('status', dir, '--json')).stdout) as { stale?: Record<string, string[]> };
    expect(json.stale).toEqual({ B: ["prev_context changed because A's findings changed"] });
    const rerun = await cli('rerun', dir, '--stale');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(runs(dir)).toEqual({ A: 2, B: 2, C: 1, X: 1 });
    expect(cachedIn(rerun.stdout)).toEqual(['C']);
  });

  test('the executor changed: every completed task is stale', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    expect((await cli('rerun', dir, '--task', 'X', '--cmd', `${kCmd}; true`)).code).toBe(0);
    const json = JSON.parse((await cli('status', dir, '--json')).stdout) as { stale?: Record<string, string[]> };
    expect(json.stale).toEqual({ A: ['the executor changed'], B: ['the executor changed'], C: ['the executor changed'] });
  });

  test('without the cache entry that held its inputs, a stale task is still found, said without detail', async () => {
    const dir = session();
    expect((await cli('run', dir, '--no-cache')).code).toBe(0);
    const text = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    writeFileSync(join(dir, 'tasks.csv'), text.replace('"alone"', '"alone, now"'));
    const json = JSON.parse((await cli('status', dir, '--json')).stdout) as { stale?: Record<string, string[]> };
    expect(Object.keys(json.stale ?? {})).toEqual(['X']);
    expect(json.stale!['X']![0]).toMatch(/^its inputs changed/);
  });
});

describe('a run with nothing to run', () => {
  test('writes nothing of the cache: no pack, and the last run\'s record stays', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    const record = readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8');
    const packs = readdirSync(join(dir, '.csv-wave', 'cache', 'packs')).sort();
    const again = await cli('run', dir, '--cmd', 'echo another');
    expect(again.stdout).toMatch(/Nothing to run/);
    expect(readFileSync(join(dir, '.csv-wave', 'last-run.json'), 'utf8')).toBe(record);
    expect(readdirSync(join(dir, '.csv-wave', 'cache', 'packs')).sort()).toEqual(packs);
  });
});

describe('the tasks a rerun forced', () => {
  test('stay forced when the rerun is interrupted and resumed; they leave .csv-wave/forced.json once they ran', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    put(dir, 'hold/A');
    const events = new RunEmitter();
    const stop = new AbortController();
    const started = new Promise<void>((resolve) => events.on('task:start', (event) => event.id === 'A' && resolve()));
    const interrupted = runSession(dir, { rerun: { tasks: ['A'] }, events, signal: stop.signal, graceSeconds: 0 });
    await started;
    // The command has logged its start: A executed (and is held) when the stop comes.
    const logged = async () => {
      while ((countRuns(dir).get('A') ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await logged();
    stop.abort();
    const summary = await interrupted;
    expect(summary.stopped).toBe('signal');
    expect(readRows(dir).get('A')!.status).toBe('pending');
    expect(JSON.parse(readFileSync(join(dir, '.csv-wave', 'forced.json'), 'utf8'))).toEqual({ tasks: ['A'] });
    rmSync(join(dir, 'hold/A'));
    const resumed = await cli('resume', dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    // A executed anew (its cached result was not taken); B and C from the cache.
    expect(runs(dir)).toEqual({ A: 3, B: 1, C: 1, X: 1 });
    expect(cachedIn(resumed.stdout)).toEqual(['B', 'C']);
    expect(JSON.parse(readFileSync(join(dir, '.csv-wave', 'forced.json'), 'utf8'))).toEqual({ tasks: [] });
  });
});

describe('what the cache saved, as status, context.md and report.html say it', () => {
  test('N task(s) from the cache', async () => {
    const dir = session();
    expect((await cli('run', dir)).code).toBe(0);
    expect((await cli('rerun', dir, '--task', 'A')).code).toBe(0);
    expect((await cli('status', dir)).stdout).toContain('\n2 task(s) from the cache\n');
    expect(JSON.parse((await cli('status', dir, '--json')).stdout)).toMatchObject({ cache: { tasks: 2, saved_usd: 0 } });
    expect(readFileSync(join(dir, 'context.md'), 'utf8')).toContain('This run took 2 task(s) from the cache.');
    const report = JSON.parse((await cli('report', dir, '--json')).stdout) as { cache: unknown };
    expect(report.cache).toEqual({ tasks: 2, saved_usd: 0, text: '2 task(s) from the cache' });
    // A task run again for good is no longer counted.
    expect((await cli('rerun', dir, '--task', 'B')).code).toBe(0);
    expect(JSON.parse((await cli('status', dir, '--json')).stdout)).toMatchObject({ cache: { tasks: 1 } });
  });
});
