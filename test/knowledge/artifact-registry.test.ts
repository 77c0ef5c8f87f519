import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ArtifactRegistry } from '../../src/knowledge/contracts/artifact-registry.js';
import { SessionWriter } from '../../src/session/files/session-writer.js';
import type { RegistryEntry } from '../../src/schema/artifact-manifest.js';
import { expectWaveError } from '../helpers/wave-error.js';

const entry = (id: string, task: string, status = 'pending', more: Partial<RegistryEntry> = {}): RegistryEntry => ({
  artifact_id: id,
  creator_role: 'writer',
  artifact_type: 'doc',
  version: '1',
  path: `artifacts/${task}/${id}.md`,
  dependencies: [],
  validation_status: status as RegistryEntry['validation_status'],
  validation_summary: '',
  metadata: { created_at: '2025-01-31T12:00:00Z', task_id: task, priority: 'P0' },
  ...more,
});

function folderWith(registry: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'registry-'));
  writeFileSync(join(dir, 'artifact-registry.json'), typeof registry === 'string' ? registry : JSON.stringify(registry, null, 2));
  return dir;
}

const task = (id: string) => ({ id, role: 'writer', priority: 'P0' });
const upstreamOf = (ids: string[]) => (id: string) => ids.includes(id);

describe('artifact-registry.json: what a result changes', () => {
  test('manifests are registered, with the engine filling what a result left out; verdicts set the status; gates follow', () => {
    const registry = ArtifactRegistry.empty();
    const plan = registry.plan(task('D1'), { manifests: [{ artifact_id: 'prd', artifact_type: 'doc', path: 'artifacts/D1/prd.md', validation_status: 'pending' }] }, upstreamOf([]), '2025-01-31T12:00:00Z');
    if ('problem' in plan) throw new Error(plan.problem);
    expect(plan.gates).toEqual([{ id: 'D1', gate: 'pending' }]);
    registry.commit(plan);
    expect(registry.entries()).toEqual([entry('prd', 'D1')]);
    expect(registry.closedGates()).toEqual(new Map([['D1', 'pending']]));
    const verdict = registry.plan(task('Q'), { validations: [{ artifact_id: 'prd', validation_status: 'failed', validation_summary: 'thin' }] }, upstreamOf(['D1']), 'now');
    if ('problem' in verdict) throw new Error(verdict.problem);
    expect(verdict.gates).toEqual([{ id: 'D1', gate: 'failed' }]);
    expect(verdict.failed.map((failed) => [failed.artifact_id, failed.validated_by, failed.validation_summary])).toEqual([['prd', 'Q', 'thin']]);
    // Nothing changed until the run took the plan.
    expect(registry.get('prd')!.validation_status).toBe('pending');
  });

  test('a new version of an artifact comes only from its task or a task below it; the old maker then holds nothing', () => {
    const registry = ArtifactRegistry.empty();
    registry.commit(registry.plan(task('D1'), { manifests: [{ artifact_id: 'prd', artifact_type: 'doc', path: 'artifacts/D1/prd.md', validation_status: 'failed' }] }, upstreamOf([]), 'now') as never);
    expect(registry.plan(task('D2'), { manifests: [{ artifact_id: 'prd', artifact_type: 'doc', path: 'x/prd.md', validation_status: 'passed' }] }, upstreamOf([]), 'now')).toEqual({
      problem: "artifact_manifests.0: artifact prd is D1's, and D1 is not upstream of D2: give the artifact another id",
    });
    const fixed = registry.plan(task('D1-fix-1'), { manifests: [{ artifact_id: 'prd', artifact_type: 'doc', version: '2', path: 'x/prd.md', validation_status: 'passed' }] }, upstreamOf(['D1']), 'now');
    if ('problem' in fixed) throw new Error(fixed.problem);
    expect(fixed.gates).toEqual([
      { id: 'D1', gate: 'passed' },
      { id: 'D1-fix-1', gate: 'passed' },
    ]);
  });

  test('written whole, and read back the same, in a copy of the session folder too', () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-'));
    const registry = ArtifactRegistry.empty();
    registry.commit(registry.plan(task('D1'), { manifests: [{ artifact_id: 'prd', artifact_type: 'doc', path: 'artifacts/D1/prd.md', validation_status: 'pending' }] }, upstreamOf([]), '2025-01-31T12:00:00Z') as never);
    registry.write(new SessionWriter(dir));
    expect(ArtifactRegistry.load(dir).entries()).toEqual(registry.entries());
    const copy = join(mkdtempSync(join(tmpdir(), 'registry-copy-')), 'session');
    cpSync(dir, copy, { recursive: true });
    expect(ArtifactRegistry.load(copy).entries()).toEqual(registry.entries());
    expect(readFileSync(join(copy, 'artifact-registry.json'), 'utf8')).not.toContain(dir);
  });
});

describe('artifact-registry.json a hand or a copy broke: refused naming the file and the line', () => {
  test.each<[string, unknown, string]>([
    ['not JSON', '{\n  "version": 1,\n  "artifacts": [,]\n}', 'artifact-registry.json:3:17: not valid JSON'],
    ['an unknown status', { version: 1, artifacts: [entry('a', 'T', 'ok')] }, 'artifact-registry.json:11: artifacts.0.validation_status: must be pending, passed, failed, got "ok"'],
    ['a path out of the session', { version: 1, artifacts: [entry('a', 'T', 'passed', { path: '../../etc/passwd' })] }, 'artifact-registry.json:9: artifacts.0.path: "../../etc/passwd" climbs out of the session folder (..)'],
    ['an absolute path (a copy of an older session)', { version: 1, artifacts: [entry('a', 'T', 'passed', { path: '/home/someone/session/artifacts/T/a.md' })] }, 'artifacts.0.path: "/home/someone/session/artifacts/T/a.md" is absolute'],
    ['an unknown key', { version: 1, artifacts: [{ ...entry('a', 'T'), owner: 'me' }] }, 'artifact-registry.json:18: artifacts.0: Unrecognized key: "owner"'],
    ['a second entry of one artifact', { version: 1, artifacts: [entry('a', 'T'), entry('a', 'U')] }, 'artifact-registry.json:20: artifacts.1: a second entry of artifact a'],
    ['another version', { version: 2, artifacts: [] }, 'artifact-registry.json:2: version: version must be 1'],
  ])('%s', (_name, content, message) => {
    const dir = folderWith(content);
    expectWaveError(() => ArtifactRegistry.load(dir), { code: 'INVALID_SESSION', message: new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) });
  });

  test('a path through a symlink that leads out of the session', () => {
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    writeFileSync(join(outside, 'a.md'), 'elsewhere');
    const dir = folderWith({ version: 1, artifacts: [entry('a', 'T', 'passed', { path: 'artifacts/T/a.md' })] });
    mkdirSync(join(dir, 'artifacts'));
    symlinkSync(outside, join(dir, 'artifacts', 'T'));
    expectWaveError(() => ArtifactRegistry.load(dir), { code: 'INVALID_SESSION', message: /artifact-registry\.json:9: artifacts\.0\.path: "artifacts\/T\/a\.md" leads out of the session folder/ });
  });

  test('a file past 64 MiB is refused before it is read', () => {
    const dir = folderWith('');
    truncateSync(join(dir, 'artifact-registry.json'), 64 * 1024 * 1024 + 1);
    expectWaveError(() => ArtifactRegistry.load(dir), { code: 'INVALID_SESSION', message: /artifact-registry\.json: 67108865 bytes, past the 67108864 csv-wave reads of it/ });
  });
});
