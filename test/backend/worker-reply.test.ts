/**
 * A worker runs an attempt from its request alone and returns everything it produced:
 * it neither reads nor writes the session folder (issue 11, item 3). The engine writes
 * the files on its main thread (run/record/attempt-files.ts).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { finishedAttempt } from '../helpers/attempt-reply.js';
import type { AttemptReply, AttemptRequest } from '../../src/executors/messages.js';
import type { TaskInput } from '../../src/executors/types.js';
import runAttempt from '../../src/executors/worker.js';
import { writeAttemptFiles } from '../../src/run/record/attempt-files.js';
import { resultText } from '../helpers/test-files.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const kRichModule = new URL('./fixtures/rich-module.mjs', import.meta.url).pathname;

function task(session: string): TaskInput {
  return {
    id: 'T',
    wave: 2,
    attempt: 1,
    session,
    row: { id: 'T', role: 'r', deps: 'UP' },
    prev_context: 'No previous context available',
    upstream: {
      deps: [{ id: 'UP', status: 'completed', findings: 'up-findings', discovery: null, artifacts: [] }],
      wisdom: { 'learnings.md': '- [UP] earlier\n' },
      warnings: [],
    },
  };
}

function expectFullReply(reply: Awaited<ReturnType<typeof runAttempt>>) {
  expect(reply).toMatchObject({
    kind: 'finished',
    status: 'completed',
    findings: expect.stringMatching(/^upstream UP=up-findings; wisdom learnings\.md; f+ \[… full output: artifacts\/T\/output\.md\]$/),
    discoveries: [{ type: 'idea', data: { title: 'an idea' } }],
    wisdom: { learnings: ['a lesson'] },
    artifacts: [
      { name: 'output', content: expect.stringMatching(/^upstream UP=up-findings; .*f{600}$/) },
      { name: 'notes', content: 'the notes' },
    ],
    discovery: { taskId: 'T', keyFindings: ['one'], artifacts: ['artifacts/T/output.md', 'artifacts/T/notes.md'] },
  });
}

describe('a worker attempt touches no session folder', () => {
  test('with a session folder that does not exist, a module attempt returns its whole reply, artifact contents and discovery record included', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'csv-wave-no-session-')), 'gone');
    const request: AttemptRequest = { executor: { type: 'module', path: kRichModule }, task: task(missing), timeoutMs: 0 };
    expectFullReply(await runAttempt(request));
    expect(readdirSync(join(missing, '..'))).toEqual([]);
  });

  test('with a read-only session folder, a command attempt returns its whole reply and the folder stays as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-ro-session-'));
    const result = resultText({
      status: 'completed',
      findings: `upstream UP=up-findings; wisdom learnings.md; ${'f'.repeat(600)}`,
      artifacts: [{ name: 'notes', content: 'the notes' }],
      key_findings: ['one'],
      discoveries: [{ type: 'idea', data: { title: 'an idea' } }],
      wisdom: { learnings: ['a lesson'] },
    });
    // Outside the session folder, and read with cat: `{title}` in a template is a placeholder.
    const resultFile = join(mkdtempSync(join(tmpdir(), 'csv-wave-result-')), 'result.json');
    writeFileSync(resultFile, result);
    chmodSync(dir, 0o555);
    try {
      // (As root the mode stops nothing: the listing below is what shows that nothing was written.)
      const reply = await runAttempt({ executor: { type: 'command', template: `cat '${resultFile}'` }, task: task(dir), timeoutMs: 0 });
      expectFullReply(reply);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  test('the engine then writes what the reply carries: the artifacts, and the discovery file listing them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-session-'));
    const reply = await runAttempt({ executor: { type: 'module', path: kRichModule }, task: task(dir), timeoutMs: 0 });
    const written = writeAttemptFiles(new SessionWriter(dir), 'T', reply, 'when-rich', {});
    expect(written).toMatchObject({ kind: 'finished', artifacts: ['artifacts/T/output.md', 'artifacts/T/notes.md'] });
    expect(readFileSync(join(dir, 'artifacts', 'T', 'notes.md'), 'utf8')).toBe('the notes');
    expect(readFileSync(join(dir, 'artifacts', 'T', 'output.md'), 'utf8')).toMatch(/f{600}$/);
    const discovery = JSON.parse(readFileSync(join(dir, 'discoveries', 'T.json'), 'utf8')) as Record<string, unknown>;
    expect(discovery).toMatchObject({
      task_id: 'T',
      status: 'completed',
      artifacts_produced: ['artifacts/T/output.md', 'artifacts/T/notes.md'],
      data: { key_findings: ['one'] },
    });
  });
});

describe('the engine trusts no path from a reply', () => {
  const finished = (name: string, taskId = 'T'): AttemptReply =>
    finishedAttempt({
      artifacts: [{ name, content: 'x' }],
      discovery: { taskId, role: 'r', status: 'completed', findings: 'f', error: null, artifacts: [] },
    });

  test.each([
    ['an artifact name that would leave its folder', finished('../../escape'), /^Invalid output: the reply holds an artifact named "\.\.\/\.\.\/escape"$/],
    ["another task's discovery record", finished('ok', 'OTHER'), /^Invalid output: the reply holds a discovery record of "OTHER"$/],
  ])('%s fails the task and writes nothing', (_, reply, error) => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-session-'));
    const written = writeAttemptFiles(new SessionWriter(dir), 'T', reply, 'always', {});
    expect(written).toMatchObject({ kind: 'error', errorClass: 'invalid-output', error: expect.stringMatching(error) });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("the engine re-checks a reply's files against the run's caps", () => {
  /** A reply as a worker elsewhere could send it: the local worker fits its files to the caps first. */
  const forged = (artifacts: { name: string; content: string }[]): AttemptReply =>
    finishedAttempt({ findings: 'f [… full output: artifacts/T/output.md]', artifacts, thread: 3 });
  const many = [
    { name: 'output', content: 'the findings' },
    ...Array.from({ length: 50 }, (_, i) => ({ name: `a${i}`, content: 'x' })),
    { name: 'output', content: 'written over the findings' },
  ];
  const big = (name: string) => ({ name, content: 'b'.repeat(6 * 1024 * 1024) });

  test.each([
    ['52 files, two named output, at the default cap of 20', many, {}, /^Invalid output: the reply holds 52 artifact files, past the cap of 20 per task \(max_artifacts_per_task\)$/],
    ['3 files at a cap of 2', [{ name: 'a', content: 'a' }, { name: 'b', content: 'b' }, { name: 'c', content: 'c' }], { maxArtifactsPerTask: 2 }, /past the cap of 2 per task/],
    ['12 MiB at the default cap of 10 MiB', [big('a'), big('b')], {}, /^Invalid output: the reply holds 12582912 bytes of artifact files, past the cap of 10485760 per task \(max_artifact_bytes\)$/],
    ['an artifact whose content is not text', [{ name: 'a', content: 'a' }, { name: 'b', content: 42 as unknown as string }], {}, /^Invalid output: the reply holds artifact 2 without a text name and content$/],
    ['artifacts that are not a list', null as unknown as [], {}, /^Invalid output: the reply holds artifacts that are not a list$/],
    ['a name repeated in another case', [{ name: 'output', content: 'the findings' }, { name: 'Output', content: 'over them' }], {}, /^Invalid output: the reply holds two artifacts of one name: "output" and "Output"$/],
  ] as const)('%s: refused as invalid-output, nothing written', (_, artifacts, limits, error) => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-session-'));
    const written = writeAttemptFiles(new SessionWriter(dir), 'T', forged(artifacts as { name: string; content: string }[]), 'always', limits);
    expect(written).toEqual({ kind: 'error', errorClass: 'invalid-output', error: expect.stringMatching(error), thread: 3 });
    expect(readdirSync(dir)).toEqual([]);
  });

  test('what a worker fits to a small cap passes: the notes that end its output file keep to the room kept for them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-session-'));
    // Findings cut at a 1 KiB cap, and two artifacts with long names dropped: the notes
    // ending output.md are longer than the quarter of the cap kept for them, and are cut there
    // (the reply's notes keep them whole).
    const names = ['a'.repeat(60), 'b'.repeat(60)];
    const result = resultText({ findings: 'f'.repeat(3000), artifacts: names.map((name) => ({ name, content: 'x'.repeat(400) })) });
    const resultFile = join(mkdtempSync(join(tmpdir(), 'csv-wave-result-')), 'result.json');
    writeFileSync(resultFile, result);
    const limits = { maxArtifactBytes: 1024 };
    const reply = await runAttempt({ executor: { type: 'command', template: `cat '${resultFile}'` }, task: task(dir), timeoutMs: 0, limits });
    expect(reply.kind).toBe('finished');
    if (reply.kind !== 'finished') return;
    expect(reply.artifacts.reduce((total, file) => total + Buffer.byteLength(file.content), 0)).toBeLessThanOrEqual(1024);
    expect(reply.notes?.join('\n')).toContain(`${names[1]} (400 bytes)`);
    const written = writeAttemptFiles(new SessionWriter(dir), 'T', reply, 'always', limits);
    expect(written).toMatchObject({ kind: 'finished', artifacts: ['artifacts/T/output.md'] });
    expect(readFileSync(join(dir, 'artifacts', 'T', 'output.md'), 'utf8')).toMatch(/2 artifact\(s\) dropped/);
  });
});
