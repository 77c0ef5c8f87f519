import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { AttemptReply } from '../../src/executors/messages.js';
import { kDefaultArtifactLimits, maxPlannedBytes, planTaskArtifacts } from '../../src/knowledge/artifacts.js';
import { writeAttemptFiles } from '../../src/run/record/attempt-files.js';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows } from '../helpers/session-builder.js';
import { resultText } from '../helpers/test-files.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';

const kEcho = 'printf %s {description}';

/**
 * A task's artifacts as a run makes them: planned by the worker (planTaskArtifacts), then
 * written by the engine from the reply (writeAttemptFiles), at the default caps.
 */
function planAndWrite(dir: string, findings: string, extra: { name: string; content: string }[]) {
  const plan = planTaskArtifacts('T', findings, extra, kDefaultArtifactLimits);
  const reply: AttemptReply = {
    kind: 'finished',
    status: 'completed',
    findings: plan.cell,
    gc_signal: '',
    severity_summary: '',
    error: '',
    discoveries: [],
    wisdom: {},
    artifacts: plan.files,
    discovery: { taskId: 'T', role: 'r', status: 'completed', findings: plan.cell, error: null, artifacts: [] },
    supervision_verdict: undefined,
    supervision_score: undefined,
  };
  const written = writeAttemptFiles(new SessionWriter(dir), 'T', reply, 'when-rich', {});
  if (written.kind !== 'finished') throw new Error(`not written: ${written.error}`);
  return { cell: plan.cell, artifacts: written.artifacts, notes: plan.notes };
}

describe('artifact paths', () => {
  test("task A's artifact b-output and task A-b's long findings are two files (artifacts/<id>/<name>.md), each pointed at by its own task", async () => {
    const longA = `A's own artifact: ${'a'.repeat(600)}`;
    const longAb = `A-b's findings: ${'b'.repeat(600)}`;
    const dir = buildSession([
      { id: 'A', description: resultText({ findings: 'short', artifacts: [{ name: 'b-output', content: longA }] }), role: 'r' },
      { id: 'A-b', description: longAb, role: 'r' },
    ]);
    expect((await runCli('run', dir, '--cmd', kEcho)).code).toBe(0);
    expect(readFileSync(join(dir, 'artifacts', 'A', 'b-output.md'), 'utf8')).toBe(longA);
    expect(readFileSync(join(dir, 'artifacts', 'A-b', 'output.md'), 'utf8')).toBe(longAb);
    expect(readRows(dir).get('A-b')!.findings).toMatch(/ \[… full output: artifacts\/A-b\/output\.md\]$/);
    const discovery = (id: string) =>
      (JSON.parse(readFileSync(join(dir, 'discoveries', `${id}.json`), 'utf8')) as { artifacts_produced: string[] }).artifacts_produced;
    expect(discovery('A')).toEqual(['artifacts/A/b-output.md']);
    expect(discovery('A-b')).toEqual(['artifacts/A-b/output.md']);
  });

  test("an artifact named like another of the task (in any case) or like its findings' file is refused, not written over it, and said in a note", () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-artifacts-'));
    const findings = 'f'.repeat(600);
    const written = planAndWrite(dir, findings, [
      { name: 'output', content: 'would replace the findings' },
      { name: 'notes', content: 'first notes' },
      { name: 'Notes', content: 'second notes' },
    ]);
    expect(written.artifacts).toEqual(['artifacts/T/output.md', 'artifacts/T/notes.md']);
    expect(readdirSync(join(dir, 'artifacts', 'T')).sort()).toEqual(['notes.md', 'output.md']);
    expect(readFileSync(join(dir, 'artifacts', 'T', 'output.md'), 'utf8')).toMatch(/^f{600}\n\[2 artifact\(s\) dropped/);
    expect(readFileSync(join(dir, 'artifacts', 'T', 'notes.md'), 'utf8')).toBe('first notes');
    expect(written.notes).toEqual([
      "2 artifact(s) dropped, named like an earlier one of this task or like its findings' own file (output): output, Notes",
    ]);
  });

  test("findings that fit the cell leave the name output to the task's own artifact", () => {
    const dir = mkdtempSync(join(tmpdir(), 'csv-wave-artifacts-'));
    const written = planAndWrite(dir, 'short', [{ name: 'output', content: 'mine' }]);
    expect(written).toEqual({ cell: 'short', artifacts: ['artifacts/T/output.md'], notes: [] });
    expect(readFileSync(join(dir, 'artifacts', 'T', 'output.md'), 'utf8')).toBe('mine');
  });

  test('the bytes a reply may carry: the cap itself, however small, as the notes ending the output file keep to the room kept for them', () => {
    expect(maxPlannedBytes(kDefaultArtifactLimits)).toBe(10 * 1024 * 1024);
    expect(maxPlannedBytes({ maxFiles: 20, maxBytes: 16 * 1024 })).toBe(16 * 1024);
    expect(maxPlannedBytes({ maxFiles: 20, maxBytes: 1024 })).toBe(1024);
    // Findings cut at a 1 KiB cap and two artifacts with long names dropped: their notes are
    // longer than the quarter of the cap kept for them, and are cut in the file (not in the reply).
    const limits = { maxFiles: 20, maxBytes: 1024 };
    const plan = planTaskArtifacts('T', 'f'.repeat(3000), ['a', 'b'].map((letter) => ({ name: letter.repeat(60), content: 'x'.repeat(400) })), limits);
    expect(plan.files.reduce((total, file) => total + Buffer.byteLength(file.content), 0)).toBeLessThanOrEqual(1024);
    expect(plan.files[0]!.content).toMatch(/…$/);
    expect(plan.notes.join('\n')).toContain(`${'b'.repeat(60)} (400 bytes)`);
  });
});
