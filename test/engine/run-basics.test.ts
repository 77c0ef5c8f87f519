import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { discoveryFileSchema } from '../../src/schema/discovery-file.js';
import { discoveryLineSchema } from '../../src/schema/discovery.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';
import { readCsvRecords, resultText } from '../helpers/test-files.js';

/** Prints the description: a test puts the task's result (JSON or text) there. */
const kEcho = 'printf %s {description}';
/** Fails the tasks whose description is `fail`, echoes the others. */
const kEchoOrFail = `case {description} in fail) echo "it broke" >&2; exit 4;; *) printf %s {description};; esac`;

function run(dir: string, ...flags: string[]) {
  return runCli('run', dir, ...flags);
}

function statuses(dir: string): Record<string, string> {
  return Object.fromEntries([...readRows(dir)].map(([id, row]) => [id, row.status]));
}

interface StatusJson {
  tasks: Record<string, string>[];
  counts: Record<string, number>;
}

/** status --json, whose exit code follows the session: 1 when a task failed or was skipped for a failure. */
async function statusJson(dir: string): Promise<StatusJson> {
  const result = await runCli('status', dir, '--json');
  const document = JSON.parse(result.stdout) as StatusJson;
  const failed = document.tasks.some((task) => task['status'] === 'failed' || (task['status'] === 'skipped' && !(task['error'] ?? '').startsWith('Skipped: GC converged')));
  expect(result.code).toBe(failed ? 1 : 0);
  return document;
}

describe('exit codes and statuses', () => {
  test('0 when every task completed', async () => {
    const dir = buildSession([
      { id: 'A', description: 'alpha', role: 'r' },
      { id: 'B', description: 'beta', role: 'r', deps: 'A' },
      { id: 'C', description: 'gamma', role: 'r', deps: 'A;B' },
    ]);
    const result = await run(dir, '--cmd', kEcho);
    expect(result.code).toBe(0);
    const rows = readRows(dir);
    expect([...rows.values()].map((row) => [row.id, row.wave, row.status, row.findings, row.error])).toEqual([
      ['A', '1', 'completed', 'alpha', ''],
      ['B', '2', 'completed', 'beta', ''],
      ['C', '3', 'completed', 'gamma', ''],
    ]);
  });

  test('1 with a failed task; its dependents are skipped transitively, the rest completes', async () => {
    const dir = buildSession([
      { id: 'BAD', description: 'fail', role: 'r' },
      { id: 'OK', description: 'fine', role: 'r' },
      { id: 'CHILD', description: 'c', role: 'r', deps: 'BAD' },
      { id: 'GRANDCHILD', description: 'g', role: 'r', deps: 'CHILD;OK' },
      { id: 'GREAT', description: 'gg', role: 'r', deps: 'GRANDCHILD' },
      // A failed context source is not a failed dependency: this task runs, without its context.
      { id: 'READER', description: 'r', role: 'r', deps: 'OK', context_from: 'BAD' },
    ]);
    const result = await run(dir, '--cmd', kEchoOrFail);
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    expect(statuses(dir)).toEqual({
      BAD: 'failed',
      OK: 'completed',
      CHILD: 'skipped',
      GRANDCHILD: 'skipped',
      GREAT: 'skipped',
      READER: 'completed',
    });
    expect(rows.get('BAD')!.error).toBe('Command exited with code 4: it broke');
    // Each skip names the root failure, however far down the chain it is.
    for (const id of ['CHILD', 'GRANDCHILD', 'GREAT']) expect(rows.get(id)!.error).toBe('Dependency failed or skipped: BAD (failed)');
    expect((await statusJson(dir)).counts).toEqual({ pending: 0, in_progress: 0, completed: 2, failed: 1, skipped: 3 });
  });

  test('2 for an invalid tasks.csv, with every violation on its line; nothing runs', async () => {
    const csv = 'id,description,role,deps\nA,do a,r,\nB,do b,r,Z\nA,again,r,\n';
    const dir = buildSession(csv, { session: '{"pipeline":"generic"}' });
    const result = await run(dir, '--cmd', 'touch ran-{id}');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/tasks\.csv:3: Unknown dependency: Z\n.*tasks\.csv:4: Duplicate task ID: A\n$/);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(csv);
    expect(readdirSync(dir).filter((name) => name.startsWith('ran-'))).toEqual([]);
  });

  test.each([
    [['--concurrency', '0'], 'Expected `--concurrency` to be a positive integer, got `0`'],
    [['--concurrency', 'many'], 'Expected `--concurrency` to be a number, got `many`'],
    [['--halt', 'nonsense'], 'Expected `--halt` to be fail=N or fail=N%, got `nonsense`'],
    [['--halt', 'fail=0'], 'Expected `--halt` to be fail=N (N ≥ 1) or fail=N% (0 < N ≤ 100), got `fail=0`'],
    [['--timeout', '-1'], 'Expected `--timeout` to be a number of seconds from 0 to 2073600 (24 days), got `-1`'],
    [['--retries', '1.5'], 'Expected `--retries` to be an integer ≥ 0, got `1.5`'],
  ])('2 for a bad flag %j, with a clear message', async (flags, message) => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const before = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const result = await run(dir, '--cmd', kEcho, ...flags);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${message}\n`);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(before);
  });

  test('2 for a --schedule that is not a choice', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const result = await run(dir, '--cmd', kEcho, '--schedule', 'sometimes');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("'sometimes' is invalid");
  });

  test('2 when no executor is given, naming --cmd and --module', async () => {
    const dir = buildSession([{ id: 'A', description: 'a', role: 'r' }]);
    const result = await run(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--cmd');
    expect(result.stderr).toContain('--module');
    expect(statuses(dir)).toEqual({ A: '' });
  });

  test('a finished session run again does nothing and exits 0', async () => {
    const dir = buildSession([
      { id: 'A', description: 'a', role: 'r' },
      { id: 'B', description: 'b', role: 'r', deps: 'A' },
    ]);
    const cmd = 'echo {id} >> runs.log; printf %s {description}';
    expect((await run(dir, '--cmd', cmd)).code).toBe(0);
    const tasks = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    const again = await run(dir, '--cmd', cmd, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ total: 0, exitCode: 0, counts: { completed: 2 } });
    expect(readFileSync(join(dir, 'runs.log'), 'utf8')).toBe('A\nB\n');
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8')).toBe(tasks);
  });
});

describe('prev_context and wave files', () => {
  test('wave-N.csv holds each csv-wave row with `[Task X] findings` lines, or the no-context text', async () => {
    const dir = buildSession([
      { id: 'A', description: 'findings of A', role: 'r' },
      { id: 'B', description: 'findings of B\nsecond line', role: 'r' },
      { id: 'EMPTY', description: resultText({ findings: '' }), role: 'r' },
      { id: 'BAD', description: 'fail', role: 'r' },
      { id: 'BOTH', description: 'x', role: 'r', deps: 'A;B', context_from: 'B;EMPTY;A' },
      { id: 'NONE', description: 'x', role: 'r', deps: 'A' },
      { id: 'FAILED-SOURCE', description: 'x', role: 'r', deps: 'A', context_from: 'BAD' },
      { id: 'DEEP', description: 'x', role: 'r', deps: 'BOTH', context_from: 'BOTH;A' },
    ]);
    // The command prints its own prev_context, so the findings show what the task received.
    const cmd = `case {description} in x) printf %s {prev_context};; fail) exit 1;; *) printf %s {description};; esac`;
    const result = await run(dir, '--cmd', cmd);
    expect(result.code).toBe(1);
    const wave1 = readCsvRecords(join(dir, 'wave-1.csv'));
    expect(wave1.map((record) => [record['id'], record['prev_context']])).toEqual([
      ['A', 'No previous context available'],
      ['B', 'No previous context available'],
      ['EMPTY', 'No previous context available'],
      ['BAD', 'No previous context available'],
    ]);
    const both = '[Task B] findings of B\nsecond line\n[Task A] findings of A';
    const wave2 = readCsvRecords(join(dir, 'wave-2.csv'));
    expect(wave2.map((record) => [record['id'], record['prev_context']])).toEqual([
      ['BOTH', both],
      ['NONE', 'No previous context available'],
      ['FAILED-SOURCE', 'No previous context available'],
    ]);
    expect(Object.keys(wave2[0]!)).toEqual([
      'id', 'title', 'description', 'role', 'angle', 'gc_round', 'deps', 'context_from', 'exec_mode', 'wave', 'prev_context',
    ]);
    const wave3 = readCsvRecords(join(dir, 'wave-3.csv'));
    expect(wave3.map((record) => [record['id'], record['prev_context']])).toEqual([
      ['DEEP', `[Task BOTH] ${both}\n[Task A] findings of A`],
    ]);
    const rows = readRows(dir);
    expect(rows.get('BOTH')!.findings).toBe(both);
    expect(rows.get('FAILED-SOURCE')!.findings).toBe('No previous context available');
    expect(rows.get('EMPTY')).toMatchObject({ status: 'completed', findings: '' });
  });
});

describe('retries and timeouts', () => {
  // Fails with exit 75 (transient) until its third attempt; counts attempts in a file.
  const kFlaky =
    'n=$(cat {id}.count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {id}.count; ' +
    '[ "$n" -ge 3 ] || { echo "busy, try later" >&2; exit 75; }; echo "done on attempt $CSV_WAVE_ATTEMPT"';

  test('a command that exits 75 twice, then succeeds, completes with --retries 2', async () => {
    const dir = buildSession([{ id: 'FLAKY', description: 'f', role: 'r' }, { id: 'NEXT', description: 'n', role: 'r', deps: 'FLAKY' }]);
    const result = await run(dir, '--cmd', kFlaky, '--retries', '2', '--retry-delay', '0.01');
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'FLAKY.count'), 'utf8')).toBe('3\n');
    expect(readRows(dir).get('FLAKY')).toMatchObject({ status: 'completed', findings: 'done on attempt 3', error: '' });
    expect(result.stdout.match(/\[RETRY\] FLAKY/g)).toHaveLength(2);
  });

  test('--timeout fails the attempt with a Timed out error; the run goes on', async () => {
    const dir = buildSession([
      { id: 'SLOW', description: 'slow', role: 'r' },
      { id: 'QUICK', description: 'quick', role: 'r' },
    ]);
    const cmd = 'case {description} in slow) sleep 20;; esac; echo ok';
    const result = await run(dir, '--cmd', cmd, '--timeout', '1', '--retries', '0');
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('SLOW')!.status).toBe('failed');
    expect(rows.get('SLOW')!.error).toMatch(/^Timed out after 1s; the command and its children were killed$/);
    expect(rows.get('QUICK')).toMatchObject({ status: 'completed', findings: 'ok' });
  });
});

describe('results and knowledge files', () => {
  test('findings over 500 characters go whole to artifacts/<id>/output.md; the cell keeps ≤500 with a pointer', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `sentence ${i} of a long output.`).join(' ');
    expect(long.length).toBeGreaterThan(1000);
    const dir = buildSession([{ id: 'LONG', description: long, role: 'r' }]);
    expect((await run(dir, '--cmd', kEcho)).code).toBe(0);
    expect(readFileSync(join(dir, 'artifacts', 'LONG', 'output.md'), 'utf8')).toBe(long);
    const cell = readRows(dir).get('LONG')!.findings;
    expect(cell.length).toBeLessThanOrEqual(500);
    expect(cell).toMatch(/^sentence 0 of a long output\. sentence 1/);
    expect(cell).toContain('artifacts/LONG/output.md');
    expect(long.startsWith(cell.slice(0, cell.indexOf(' [… full output')))).toBe(true);
    const discovery = JSON.parse(readFileSync(join(dir, 'discoveries', 'LONG.json'), 'utf8')) as { findings: string; artifacts_produced: string[] };
    expect(discovery.findings).toBe(cell);
    expect(discovery.artifacts_produced).toEqual(['artifacts/LONG/output.md']);
  });

  test('a cut never splits a character outside the BMP (it would come back as U+FFFD)', async () => {
    const emoji = '😀'.repeat(600);
    // 99 units of key finding: 49 emoji and the high half of the 50th.
    const key = '😀'.repeat(60);
    const dir = buildSession([{ id: 'EMOJI', description: resultText({ findings: emoji, key_findings: [key] }), role: 'r' }]);
    expect((await run(dir, '--cmd', kEcho)).code).toBe(0);
    expect(readFileSync(join(dir, 'artifacts', 'EMOJI', 'output.md'), 'utf8')).toBe(emoji);
    const cell = readRows(dir).get('EMOJI')!.findings;
    expect(cell.length).toBeLessThanOrEqual(500);
    const kept = cell.slice(0, cell.indexOf(' [… full output'));
    expect(kept).not.toContain('\uFFFD');
    expect(emoji.startsWith(kept)).toBe(true);
    const discovery = JSON.parse(readFileSync(join(dir, 'discoveries', 'EMOJI.json'), 'utf8')) as { data: { key_findings: string[] } };
    expect(discovery.data.key_findings).toEqual(['😀'.repeat(49)]);
  });

  test('findings of exactly 500 characters stay whole in the cell', async () => {
    const exact = 'y'.repeat(500);
    const dir = buildSession([{ id: 'EXACT', description: exact, role: 'r' }]);
    expect((await run(dir, '--cmd', kEcho)).code).toBe(0);
    expect(readRows(dir).get('EXACT')!.findings).toBe(exact);
    expect(existsSync(join(dir, 'artifacts'))).toBe(false);
  });

  test('discoveries go to discoveries.ndjson, duplicates dropped by the key of their type', async () => {
    const first = [
      { type: 'idea', data: { title: 'Cache', body: 'first' } },
      { type: 'idea', data: { title: 'Cache', body: 'same title, dropped' } },
      { type: 'idea', data: { title: 'Old idea', body: 'already on the board' } },
      { type: 'critique', data: { idea_title: 'Cache', text: 'a' } },
      { type: 'theme', data: { name: 'Speed' } },
      { type: 'proposal', data: { title: 'P1' } },
      { type: 'evaluation', data: { proposal_title: 'P1', score: 7 } },
      { type: 'gc_decision', data: { round: 1, decision: 'REVISION_NEEDED' } },
      { type: 'custom', data: { a: 1, b: [2] } },
    ];
    const second = [
      { type: 'idea', data: { title: 'Cache', body: 'other task, dropped' } },
      { type: 'idea', data: { title: 'Critic' } },
      { type: 'critique', data: { idea_title: 'Cache', text: 'b, dropped' } },
      { type: 'theme', data: { name: 'Speed', extra: 'dropped' } },
      { type: 'proposal', data: { title: 'P1', v: 2 } },
      { type: 'evaluation', data: { proposal_title: 'P1', score: 9 } },
      { type: 'gc_decision', data: { round: 1, decision: 'CONVERGED' } },
      { type: 'gc_decision', data: { round: 2, decision: 'CONVERGED' } },
      { type: 'custom', data: { a: 1, b: [2] } },
      { type: 'custom', data: { a: 2 } },
    ];
    const earlier = '{"ts":"2024-01-01T00:00:00.000Z","worker":"OLD","type":"idea","data":{"title":"Old idea"}}\nnot json at all\n';
    const dir = buildSession(
      [
        { id: 'FIRST', description: resultText({ findings: 'one', discoveries: first }), role: 'r' },
        { id: 'SECOND', description: resultText({ findings: 'two', discoveries: second }), role: 'r', deps: 'FIRST' },
      ],
      { files: { 'discoveries.ndjson': earlier } },
    );
    const result = await run(dir, '--cmd', kEcho);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('discoveries.ndjson:2: skipped a line that is not JSON');
    const text = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8');
    expect(text.startsWith(earlier)).toBe(true);
    const lines = text
      .slice(earlier.length)
      .trimEnd()
      .split('\n')
      .map((line) => discoveryLineSchema.parse(JSON.parse(line)));
    expect(lines.map((line) => [line.worker, line.type, line.data])).toEqual([
      ['FIRST', 'idea', { title: 'Cache', body: 'first' }],
      ['FIRST', 'critique', { idea_title: 'Cache', text: 'a' }],
      ['FIRST', 'theme', { name: 'Speed' }],
      ['FIRST', 'proposal', { title: 'P1' }],
      ['FIRST', 'evaluation', { proposal_title: 'P1', score: 7 }],
      ['FIRST', 'gc_decision', { round: 1, decision: 'REVISION_NEEDED' }],
      ['FIRST', 'custom', { a: 1, b: [2] }],
      ['SECOND', 'idea', { title: 'Critic' }],
      ['SECOND', 'gc_decision', { round: 2, decision: 'CONVERGED' }],
      ['SECOND', 'custom', { a: 2 }],
    ]);
    for (const line of lines) expect(Number.isNaN(Date.parse(line.ts))).toBe(false);
  });

  test('every finished task gets discoveries/<id>.json with the seed-000 fields', async () => {
    const rich = {
      findings: 'rich findings',
      key_findings: Array.from({ length: 7 }, (_, i) => `${i}`.padEnd(150, 'k')),
      decisions: ['use a cache'],
      files_modified: ['src/a.ts'],
      verification: 'tested',
      quality_score: 0.8,
      supervision_verdict: 'pass',
      artifacts: [{ name: 'report', content: '# report' }],
    };
    const dir = buildSession([
      { id: 'RICH', description: resultText(rich), role: 'ideator' },
      { id: 'PLAIN', description: 'plain text', role: 'critic' },
      { id: 'BROKEN', description: 'fail', role: 'critic' },
      { id: 'REPORTED', description: resultText({ status: 'failed', findings: 'half done' }), role: 'critic' },
      { id: 'BLOCKED', description: 'x', role: 'synth', deps: 'BROKEN' },
    ], { session: '{"pipeline":"generic","discovery_files":"always"}' });
    expect((await run(dir, '--cmd', kEchoOrFail)).code).toBe(1);
    const files = readdirSync(join(dir, 'discoveries')).sort();
    expect(files).toEqual(['BLOCKED.json', 'BROKEN.json', 'PLAIN.json', 'REPORTED.json', 'RICH.json']);
    const read = (id: string) => discoveryFileSchema.parse(JSON.parse(readFileSync(join(dir, 'discoveries', `${id}.json`), 'utf8')));
    const richFile = read('RICH');
    expect(richFile).toMatchObject({
      task_id: 'RICH',
      worker: 'RICH',
      type: 'ideator',
      status: 'completed',
      findings: 'rich findings',
      quality_score: 0.8,
      supervision_verdict: 'pass',
      error: null,
      data: { decisions: ['use a cache'], files_modified: ['src/a.ts'], verification: 'tested' },
      artifacts_produced: ['artifacts/RICH/report.md'],
    });
    expect(richFile.data.key_findings).toHaveLength(5);
    for (const [i, item] of richFile.data.key_findings.entries()) {
      expect(item.length).toBeLessThan(100);
      expect(item.startsWith(`${i}k`)).toBe(true);
    }
    expect(Number.isNaN(Date.parse(richFile.timestamp))).toBe(false);
    expect(readFileSync(join(dir, 'artifacts', 'RICH', 'report.md'), 'utf8')).toBe('# report');
    expect(read('PLAIN')).toMatchObject({
      status: 'completed',
      findings: 'plain text',
      quality_score: null,
      supervision_verdict: null,
      error: null,
      data: { key_findings: [], decisions: [], files_modified: [], verification: null },
      artifacts_produced: [],
    });
    expect(read('BROKEN')).toMatchObject({ status: 'failed', findings: '', error: 'Command exited with code 4: it broke' });
    expect(read('REPORTED')).toMatchObject({ status: 'failed', findings: 'half done', error: 'The task reported failure: half done' });
    expect(read('BLOCKED')).toMatchObject({ type: 'synth', status: 'skipped', error: 'Dependency failed or skipped: BROKEN (failed)' });
    expect(readRows(dir).get('REPORTED')).toMatchObject({ status: 'failed', findings: 'half done', error: 'The task reported failure: half done' });
  });


  test('in a generic session only tasks with more than their row get a discovery file (when-rich)', async () => {
    const dir = buildSession([
      { id: 'RICH', description: resultText({ findings: 'f', decisions: ['why'] }), role: 'r' },
      { id: 'PLAIN', description: 'plain text', role: 'r' },
      { id: 'BROKEN', description: 'fail', role: 'r' },
      { id: 'BLOCKED', description: 'x', role: 'r', deps: 'BROKEN' },
    ]);
    expect((await run(dir, '--cmd', kEchoOrFail)).code).toBe(1);
    expect(readdirSync(join(dir, 'discoveries')).sort()).toEqual(['BROKEN.json', 'RICH.json']);
  });
  test('wisdom entries are appended to wisdom/<kind>.md', async () => {
    const dir = buildSession(
      [
        { id: 'A', description: resultText({ findings: 'a', wisdom: { learnings: ['retry with care', 'two\nlines'], issues: ['flaky net'] } }), role: 'r' },
        { id: 'B', description: resultText({ findings: 'b', wisdom: { learnings: ['B learned'], conventions: ['kebab-case'] } }), role: 'r', deps: 'A' },
      ],
    );
    const wisdomDir = join(dir, 'wisdom');
    // The file is appended to, never rewritten.
    mkdirSync(wisdomDir);
    writeFileSync(join(wisdomDir, 'learnings.md'), '# Learnings\n');
    expect((await run(dir, '--cmd', kEcho)).code).toBe(0);
    expect(readFileSync(join(wisdomDir, 'learnings.md'), 'utf8')).toBe(
      '# Learnings\n- [A] retry with care\n- [A] two lines\n- [B] B learned\n',
    );
    expect(readFileSync(join(wisdomDir, 'issues.md'), 'utf8')).toBe('- [A] flaky net\n');
    expect(readFileSync(join(wisdomDir, 'conventions.md'), 'utf8')).toBe('- [B] kebab-case\n');
    expect(existsSync(join(wisdomDir, 'decisions.md'))).toBe(false);
  });

  test.each([
    ['findings is a number', { findings: 42 }, /^Invalid result: findings: .*string/],
    ['status outside the enum', { status: 'done', findings: 'x' }, /^Invalid result: status: /],
    ['an unknown field', { findings: 'x', colour: 'blue' }, /^Invalid result: .*colour/],
    ['a discovery without data', { findings: 'x', discoveries: [{ type: 'idea' }] }, /^Invalid result: discoveries\.0\.data: /],
    ['an artifact name that leaves the folder', { findings: 'x', artifacts: [{ name: '../escape', content: 'x' }] }, /^Invalid result: artifacts\.0\.name: /],
    ['another task id', { id: 'OTHER', findings: 'x' }, /^Invalid result: id is OTHER, expected T$/],
  ])('an invalid result (%s) fails the task naming the field, without retry', async (_, result, message) => {
    const dir = buildSession([{ id: 'T', description: resultText(result), role: 'r' }]);
    const run1 = await run(dir, '--cmd', `echo run >> count; ${kEcho}`, '--retries', '2', '--retry-delay', '0.01');
    expect(run1.code).toBe(1);
    const row = readRows(dir).get('T')!;
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(message);
    expect(readFileSync(join(dir, 'count'), 'utf8')).toBe('run\n');
    expect(existsSync(join(dir, 'artifacts'))).toBe(false);
  });

  test('status --json shows findings exactly as produced, formula-like ones stored guarded', async () => {
    const findings: Record<string, string> = {
      EQ: '=SUM(A1:A3)',
      PLUS: '+1 more',
      MINUS: '-2 less',
      AT: '@cell',
      TAB: '\tindented',
      QUOTE: "'already quoted",
      PLAIN: 'plain, "with" quotes',
    };
    const dir = buildSession(
      Object.entries(findings).map(([id, text]) => ({ id, description: resultText({ findings: text, gc_signal: `=${id}` }), role: 'r' })),
    );
    expect((await run(dir, '--cmd', kEcho)).code).toBe(0);
    const raw = readFileSync(join(dir, 'tasks.csv'), 'utf8');
    expect(raw).toContain(`"'=SUM(A1:A3)"`);
    expect(raw).toContain(`"''already quoted"`);
    expect(raw).not.toMatch(/(^|,)"[=+\-@\t]/m);
    const status = await statusJson(dir);
    for (const task of status.tasks) {
      expect(task['findings']).toBe(findings[task['id']!]);
      expect(task['gc_signal']).toBe(`=${task['id']}`);
    }
    expect(status.counts['completed']).toBe(Object.keys(findings).length);
  });
});

describe('scheduling', () => {
  test('P0 starts before P1 (and blank) before P2, file order within a priority, wave by wave', async () => {
    const rows: RowInput[] = [
      { id: 'A', description: 'a', role: 'r', priority: 'P2' },
      { id: 'B', description: 'b', role: 'r', priority: 'P1' },
      { id: 'C', description: 'c', role: 'r', priority: 'P0' },
      { id: 'D', description: 'd', role: 'r', priority: '' },
      { id: 'E', description: 'e', role: 'r', priority: 'P0' },
      { id: 'F', description: 'f', role: 'r', priority: 'P2' },
      { id: 'LATER', description: 'l', role: 'r', priority: 'P0', deps: 'F' },
    ];
    const dir = buildSession(rows);
    const result = await run(dir, '--cmd', 'echo {id} >> order.txt; echo ok', '--concurrency', '1');
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'order.txt'), 'utf8').trim().split('\n')).toEqual(['C', 'E', 'B', 'D', 'A', 'F', 'LATER']);
  });

  test('--schedule eager gives the same tasks.csv and wave files as waves', async () => {
    const rows: RowInput[] = [
      { id: 'A', description: 'a', role: 'r' },
      { id: 'SLOW', description: 'slow', role: 'r' },
      { id: 'BAD', description: 'fail', role: 'r' },
      { id: 'B', description: 'b', role: 'r', deps: 'A', context_from: 'A;SLOW' },
      { id: 'C', description: 'c', role: 'r', deps: 'SLOW', context_from: 'SLOW' },
      { id: 'D', description: 'd', role: 'r', deps: 'A', context_from: 'BAD;A' },
      { id: 'E', description: 'e', role: 'r', deps: 'BAD' },
      { id: 'F', description: 'f', role: 'r', deps: 'B;C', context_from: 'C;B;A' },
      { id: 'G', description: 'g', role: 'r', deps: 'E' },
      { id: 'H', description: 'h', role: 'r', deps: 'D;A', context_from: 'D' },
      // Every task of wave 4 is skipped before it could start.
      { id: 'I', description: 'i', role: 'r', deps: 'G' },
    ];
    const cmd = `case {description} in fail) exit 1;; slow) sleep 0.3;; esac; printf '%s <- %s' {id} {prev_context}`;
    const waves = buildSession(rows);
    const eager = buildSession(rows);
    expect((await run(waves, '--cmd', cmd, '--concurrency', '3')).code).toBe(1);
    expect((await run(eager, '--cmd', cmd, '--concurrency', '3', '--schedule', 'eager')).code).toBe(1);
    expect(readFileSync(join(eager, 'tasks.csv'), 'utf8')).toBe(readFileSync(join(waves, 'tasks.csv'), 'utf8'));
    const waveFiles = (dir: string) => readdirSync(dir).filter((name) => /^wave-\d+\.csv$/.test(name)).sort();
    expect(waveFiles(eager)).toEqual(waveFiles(waves));
    for (const name of waveFiles(waves)) {
      expect(readFileSync(join(eager, name), 'utf8'), name).toBe(readFileSync(join(waves, name), 'utf8'));
    }
    expect(statuses(waves)).toEqual({
      A: 'completed',
      SLOW: 'completed',
      BAD: 'failed',
      B: 'completed',
      C: 'completed',
      D: 'completed',
      E: 'skipped',
      F: 'completed',
      G: 'skipped',
      H: 'completed',
      I: 'skipped',
    });
    expect(readRows(waves).get('F')!.findings).toBe('F <- [Task C] C <- [Task SLOW] SLOW <- No previous context available\n[Task B] B <- [Task A] A <- No previous context available\n[Task SLOW] SLOW <- No previous context available\n[Task A] A <- No previous context available');
  });

  test('--halt fail=1 stops starting new tasks once one failed; the rest stay pending; exit 1', async () => {
    const dir = buildSession([
      { id: 'FIRST', description: 'fail', role: 'r' },
      { id: 'B', description: 'b', role: 'r' },
      { id: 'C', description: 'c', role: 'r' },
      { id: 'D', description: 'd', role: 'r', deps: 'B' },
    ]);
    const result = await run(dir, '--cmd', `echo {id} >> ran.txt; ${kEchoOrFail}`, '--concurrency', '1', '--halt', 'fail=1', '--json');
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as { stopped: string; reason: string; exitCode: number };
    expect(summary).toMatchObject({ stopped: 'halt', exitCode: 1 });
    expect(summary.reason).toMatch(/^Halted: 1 task\(s\) failed/);
    expect(readFileSync(join(dir, 'ran.txt'), 'utf8')).toBe('FIRST\n');
    const status = await statusJson(dir);
    expect(status.counts).toMatchObject({ failed: 1, pending: 3, in_progress: 0, completed: 0 });
  });
});
