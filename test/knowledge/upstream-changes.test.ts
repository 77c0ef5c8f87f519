import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildPromptContext } from '../../src/knowledge/prompt-context.js';
import { buildUpstream } from '../../src/knowledge/upstream.js';
import { withChanges, type RunWorkdir } from '../../src/run/workdir/workdir-setup.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A session where A recorded a worktree patch and B did not. */
function session(): string {
  const dir = mkdtempSync(join(tmpdir(), 'csv-wave-upstream-changes-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'artifacts', 'A'), { recursive: true });
  mkdirSync(join(dir, 'discoveries'));
  writeFileSync(join(dir, 'artifacts', 'A', 'changes.patch'), 'csv-wave task A\n\ndiff --git a/x.txt b/x.txt\n+new line\n');
  const record = (id: string, files: string[], artifacts: string[]) =>
    JSON.stringify({
      task_id: id, worker: id, timestamp: '2026-01-01T00:00:00.000Z', type: 'worker', status: 'completed', findings: `${id} done`,
      quality_score: null, supervision_verdict: null, error: null,
      data: { key_findings: [], decisions: [], files_modified: files, verification: null }, artifacts_produced: artifacts,
    });
  writeFileSync(join(dir, 'discoveries', 'A.json'), record('A', ['x.txt'], ['artifacts/A/changes.patch']));
  writeFileSync(join(dir, 'discoveries', 'B.json'), record('B', [], []));
  return dir;
}

const kWorktree: RunWorkdir = { mode: 'worktree', repo: '/repo', base: 'b'.repeat(40), sessionId: 'sid-1', keep: false };

describe("a dependency's worktree changes in the upstream context", () => {
  it('names the branch and the patch of a dependency that recorded one, and the prompt shows them', () => {
    const dir = session();
    const deps = [
      { id: 'A', status: 'completed', findings: 'A done' },
      { id: 'B', status: 'completed', findings: 'B done' },
    ];
    const upstream = withChanges(buildUpstream(dir, deps), kWorktree);
    expect(upstream.deps[0]!.changes).toEqual({ branch: 'csv-wave/sid-1/A', patch: 'artifacts/A/changes.patch' });
    expect(upstream.deps[1]!.changes).toBeUndefined();

    const prompt = buildPromptContext(dir, { pipeline: 'generic', topic: '' }, upstream).upstream;
    expect(prompt).toContain('Changes: on the git branch csv-wave/sid-1/A, as the patch artifacts/A/changes.patch (files: x.txt)');
    expect(prompt).toContain('+new line');
    expect(prompt).not.toContain('csv-wave/sid-1/B');
  });

  it('adds nothing outside a worktree run', () => {
    const dir = session();
    const upstream = buildUpstream(dir, [{ id: 'A', status: 'completed', findings: 'A done' }]);
    expect(withChanges(upstream, { mode: 'task' })).toBe(upstream);
    expect(withChanges(upstream, undefined).deps[0]!.changes).toBeUndefined();
  });
});

describe('the name of a patch artifact', () => {
  it('keeps .patch, so that git apply takes the file; other names get .md', async () => {
    const { artifactPath } = await import('../../src/knowledge/artifacts.js');
    expect(artifactPath('A', 'changes.patch')).toBe('artifacts/A/changes.patch');
    expect(artifactPath('A', 'report')).toBe('artifacts/A/report.md');
    expect(artifactPath('A', 'notes.txt')).toBe('artifacts/A/notes.txt.md');
  });
});
