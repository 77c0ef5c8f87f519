/**
 * Caps on what a task may produce: each has a sane default, is configurable (RunOptions,
 * session.json), and is reported when hit — in the task's findings, or as a warning
 * naming the task — never silently.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { normalizeRunOptions, type RunOptions } from '../../src/options/options.js';
import type { AttemptRequest, WorkerReply } from '../../src/executors/messages.js';
import runWorkerAttempt from '../../src/executors/worker.js';
import { writeAttemptFiles } from '../../src/run/record/attempt-files.js';
import { buildPrevContext } from '../../src/graph/prev-context.js';
import { DiscoveryBoard } from '../../src/knowledge/discoveries-board.js';
import { sessionConfigSchema } from '../../src/schema/session.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { resultText } from '../helpers/test-files.js';
import { expectOthersIntact, hostileSession, kBystanders, runScripts } from './helpers.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const kModule = new URL('./fixtures/hostile-module.mjs', import.meta.url).pathname;
const kMiB = 1024 * 1024;


describe('caps at their defaults', () => {
  test('artifacts: 20 files and 10 MiB per task; past them artifacts are dropped and findings cut, each said in the findings', async () => {
    const dir = buildSession([
      { id: 'MANY', description: 'many-artifacts', role: 'r' },
      { id: 'BIGART', description: 'big-artifacts', role: 'r' },
      { id: 'HUGE', description: 'huge-findings', role: 'r' },
      ...kBystanders,
    ]);
    const result = await runCli('run', dir, '--module', kModule);
    expect(result.code).toBe(0);
    const rows = readRows(dir);
    const artifactsOf = (id: string) => readdirSync(join(dir, 'artifacts', id)).sort();

    const many = rows.get('MANY')!;
    expect(many.status).toBe('completed');
    expect(many.findings).toBe(
      'made 25 artifacts\n[5 artifact(s) dropped, past the cap of 20 files and 10485760 bytes per task ' +
        '(max_artifacts_per_task, max_artifact_bytes): part-20 (10 bytes), part-21 (10 bytes), part-22 (10 bytes), ' +
        'part-23 (10 bytes), part-24 (10 bytes)]',
    );
    expect(artifactsOf('MANY')).toEqual(
      Array.from({ length: 20 }, (_, i) => `part-${String(i).padStart(2, '0')}.md`),
    );

    const big = rows.get('BIGART')!;
    expect(big.findings).toContain('[1 artifact(s) dropped, past the cap of 20 files and 10485760 bytes per task');
    expect(big.findings).toContain(': c (4194304 bytes)]');
    expect(artifactsOf('BIGART')).toEqual(['a.md', 'b.md']);

    const huge = rows.get('HUGE')!;
    expect(huge.status).toBe('completed');
    expect(huge.findings.length).toBeLessThanOrEqual(500);
    expect(huge.findings).toMatch(/^f+\n\[findings cut: the first 10481664 of 12582912 bytes kept \(max_artifact_bytes 10485760\)\] \[… full output: artifacts\/HUGE\/output\.md\]$/);
    expect(statSync(join(dir, 'artifacts', 'HUGE', 'output.md')).size).toBeLessThanOrEqual(10 * kMiB);
    // The discovery file lists only what was written.
    const discovery = JSON.parse(readFileSync(join(dir, 'discoveries', 'BIGART.json'), 'utf8')) as { artifacts_produced: string[] };
    expect(discovery.artifacts_produced).toEqual(['artifacts/BIGART/a.md', 'artifacts/BIGART/b.md']);
    expectOthersIntact(dir);
  });

  test('discoveries: a line over 64 KiB is dropped with a warning naming the task; the others are kept', async () => {
    const dir = buildSession([{ id: 'BIGDISC', description: 'big-discovery', role: 'r' }, ...kBystanders]);
    const result = await runCli('run', dir, '--module', kModule);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /warning: BIGDISC: dropped a discovery of type "idea": its line is \d+ bytes, past the cap of 65536 \(max_discovery_line_bytes\)/,
    );
    const lines = readFileSync(join(dir, 'discoveries.ndjson'), 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { data: { title: string } }).data.title)).toEqual(['small idea']);
    expect(readRows(dir).get('BIGDISC')!.status).toBe('completed');
    expectOthersIntact(dir);
  });

  test('stderr: its end is kept for the error, marked as cut', async () => {
    const dir = hostileSession({ NOISY: `i=0; while [ $i -lt 3000 ]; do echo "noise $i" >&2; i=$((i+1)); done; echo 'THE END' >&2; exit 1` });
    expect((await runScripts(dir)).code).toBe(1);
    const error = readRows(dir).get('NOISY')!.error;
    expect(error).toMatch(/^Command exited with code 1: …/);
    expect(error.endsWith('noise 2999\nTHE END')).toBe(true);
    expect(error.length).toBeLessThanOrEqual(2100);
    expectOthersIntact(dir);
  });

  test('a very long error message keeps its beginning and its end', async () => {
    const dir = hostileSession({ LOUD: `printf '%s' '${resultText({ status: 'failed', error: `start ${'e'.repeat(100_000)} end` })}'` });
    expect((await runScripts(dir)).code).toBe(1);
    const error = readRows(dir).get('LOUD')!.error;
    expect(error.length).toBeLessThanOrEqual(4100);
    expect(error).toMatch(/^start e+ \[…\d+ characters cut…\] e+ end$/);
    expectOthersIntact(dir);
  });
});

describe('caps travel to the worker in the request', () => {
  function request(session: string, overrides: Partial<AttemptRequest> & { template: string; prevContext?: string }): AttemptRequest {
    const { template, prevContext, ...rest } = overrides;
    const upstream = { deps: [], wisdom: {}, warnings: [] };
    return {
      executor: { type: 'command', template },
      task: { id: 'T', wave: 1, attempt: 1, session, row: { id: 'T', role: 'r' }, prev_context: prevContext ?? 'No previous context available', upstream },
      timeoutMs: 0,
      ...rest,
    };
  }
  /** The worker's half of an attempt, then the engine's: its files written as a run writes them. */
  const runAttempt = async (attempt: AttemptRequest): Promise<WorkerReply> =>
    writeAttemptFiles(new SessionWriter(attempt.task.session), attempt.task.id, await runWorkerAttempt(attempt), 'always', attempt.limits ?? {});
  const session = () => mkdtempSync(join(tmpdir(), 'csv-wave-limits-'));
  const finished = (reply: WorkerReply) => {
    expect(reply.kind).toBe('finished');
    if (reply.kind !== 'finished') throw new Error('unreachable');
    return reply;
  };

  test('maxStdoutBytes, maxArtifactsPerTask and maxArtifactBytes are honoured, and each hit is a note', async () => {
    const dir = session();
    const stdout = finished(await runAttempt(request(dir, { template: 'head -c 10000 /dev/zero | tr "\\0" s', limits: { maxStdoutBytes: 2048 } })));
    expect(stdout.notes).toEqual(['stdout cut: the first 2048 of 10000 bytes kept, 7952 dropped (max_stdout_bytes)']);
    expect(readFileSync(join(dir, 'artifacts', 'T', 'output.md'), 'utf8')).toBe(`${'s'.repeat(2048)}\n[${stdout.notes![0]}]`);

    const result = resultText({ findings: 'three', artifacts: ['a', 'b', 'c'].map((name) => ({ name, content: name.repeat(100) })) });
    const files = finished(await runAttempt(request(session(), { template: `printf '%s' '${result}'`, limits: { maxArtifactsPerTask: 2 } })));
    expect(files.artifacts).toEqual(['artifacts/T/a.md', 'artifacts/T/b.md']);
    expect(files.findings).toBe('three\n[1 artifact(s) dropped, past the cap of 2 files and 10485760 bytes per task (max_artifacts_per_task, max_artifact_bytes): c (100 bytes)]');
    expect(files.notes).toHaveLength(1);

    const bytes = finished(await runAttempt(request(session(), { template: `printf '%s' '${result}'`, limits: { maxArtifactBytes: 1024 * 2 + 50 } })));
    expect(bytes.artifacts).toHaveLength(3);
    const tight = finished(await runAttempt(request(session(), { template: `printf '%s' '${result}'`, limits: { maxArtifactBytes: 250 } })));
    expect(tight.artifacts).toEqual(['artifacts/T/a.md', 'artifacts/T/b.md']);
    expect(tight.findings).toContain('c (100 bytes)');
  });

  test('a prev_context cut at its cap is a note (not in the findings: the task did nothing wrong)', async () => {
    const source = { status: 'completed', findings: 'x'.repeat(5000) };
    const prevContext = buildPrevContext(['A'], () => source, 1000);
    const reply = finished(await runAttempt(request(session(), { template: 'echo fine', prevContext })));
    expect(reply.findings).toBe('fine');
    expect(reply.notes).toEqual([expect.stringMatching(/^prev_context cut: \d+ of 5009 characters kept \(prev_context_cap\)$/)]);
    // An error reply carries it too.
    const failed = await runAttempt(request(session(), { template: 'exit 3', prevContext }));
    expect(failed).toMatchObject({ kind: 'error', notes: [expect.stringMatching(/^prev_context cut: /)] });
  });

  test('the board takes its line cap as an option', () => {
    const warnings: string[] = [];
    const board = new DiscoveryBoard(new SessionWriter(session()), (message) => warnings.push(message), { maxLineBytes: 1024 });
    expect(board.add('T9', [
      { type: 'note', data: { text: 'small' } },
      { type: 'note', data: { text: 'y'.repeat(2000) } },
    ])).toBe(1);
    expect(warnings).toEqual([expect.stringMatching(/^T9: dropped a discovery of type "note": its line is \d+ bytes, past the cap of 1024/)]);
  });
});

describe('caps are configurable', () => {
  test('RunOptions: defaults, and one check each', () => {
    const executor = { type: 'command', template: 'true' } as const;
    expect(normalizeRunOptions({ executor })).toMatchObject({
      maxStdoutBytes: kMiB,
      maxArtifactsPerTask: 20,
      maxArtifactBytes: 10 * kMiB,
      maxDiscoveryLineBytes: 64 * 1024,
    });
    const bad: [keyof RunOptions, unknown, string][] = [
      ['maxStdoutBytes', 100, 'Expected `maxStdoutBytes` to be an integer ≥ 1024 (bytes), got `100` (number)'],
      ['maxArtifactsPerTask', 0, 'Expected `maxArtifactsPerTask` to be a positive integer, got `0` (number)'],
      ['maxArtifactBytes', 1.5e3 + 0.5, 'Expected `maxArtifactBytes` to be an integer ≥ 1024 (bytes), got `1500.5` (number)'],
      ['maxDiscoveryLineBytes', '64k', 'Expected `maxDiscoveryLineBytes` to be an integer ≥ 1024 (bytes), got `64k` (string)'],
    ];
    for (const [name, value, message] of bad) {
      expect(() => normalizeRunOptions({ executor, [name]: value } as RunOptions)).toThrow(message);
    }
  });

  test('session.json: max_stdout_bytes, max_artifacts_per_task, max_artifact_bytes, max_discovery_line_bytes', () => {
    const config = { max_stdout_bytes: 4096, max_artifacts_per_task: 3, max_artifact_bytes: 2048, max_discovery_line_bytes: 1024 };
    expect(sessionConfigSchema.parse(config)).toMatchObject(config);
    expect(sessionConfigSchema.safeParse({ max_stdout_bytes: 10 }).success).toBe(false);
    expect(sessionConfigSchema.safeParse({ max_artifacts_per_task: 0 }).success).toBe(false);
  });

  test('session.json caps reach the workers and the board, and every cap hit is a warning naming the task', async () => {
    const dir = hostileSession(
      {
        CHATTY: `head -c 10000 /dev/zero | tr '\\0' c`,
        ARTS: `printf '%s' '${resultText({ findings: 'arts', artifacts: ['a', 'b', 'c', 'd'].map((name) => ({ name, content: name })) })}'`,
        DISC: `printf '%s' '${resultText({ findings: 'disc', discoveries: [{ type: 'idea', data: { title: 'z'.repeat(3000) } }] })}'`,
      },
      {
        'session.json': JSON.stringify({ pipeline: 'generic', max_stdout_bytes: 4096, max_artifacts_per_task: 3, max_discovery_line_bytes: 1024 }),
      },
    );
    const result = await runScripts(dir);
    expect(result.code).toBe(0);
    const rows = readRows(dir);
    expect(rows.get('CHATTY')!.findings).toContain('[stdout cut: the first 4096 of 10000 bytes kept, 5904 dropped (max_stdout_bytes)]');
    expect(result.stderr).toContain('warning: CHATTY: stdout cut: the first 4096 of 10000 bytes kept');
    expect(rows.get('ARTS')!.findings).toContain('[1 artifact(s) dropped, past the cap of 3 files');
    expect(result.stderr).toContain('warning: ARTS: 1 artifact(s) dropped');
    expect(result.stderr).toMatch(/warning: DISC: dropped a discovery of type "idea": its line is \d+ bytes, past the cap of 1024/);
    expect(existsSync(join(dir, 'discoveries.ndjson'))).toBe(false);
    expectOthersIntact(dir);
  });

  test('a prev_context cut at prev_context_cap is a warning naming the task', async () => {
    const dir = buildSession(
      [
        { id: 'SRC', description: 'x'.repeat(3000), role: 'r' },
        { id: 'READER', description: 'read', role: 'r', deps: 'SRC', context_from: 'SRC' },
        ...kBystanders,
      ],
      { session: JSON.stringify({ pipeline: 'generic', prev_context_cap: 200 }) },
    );
    const result = await runCli('run', dir, '--cmd', 'printf %s {description}');
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/warning: READER: prev_context cut: \d+ of \d+ characters kept \(prev_context_cap\)/);
  });
});
