import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';

/** The module that gives the contracts a row's `script` cell holds (test/fixtures/contract-module.mjs). */
const kModule = fileURLToPath(new URL('../fixtures/contract-module.mjs', import.meta.url));
const kSchedules = ['waves', 'eager'] as const;

const manifest = (id: string, task: string, status: string, extra: Record<string, unknown> = {}) => ({
  artifact_id: id,
  artifact_type: 'code',
  path: `artifacts/${task}/${id}.md`,
  validation_status: status,
  ...extra,
});
const script = (value: unknown) => JSON.stringify(value);
const session = (more: Record<string, unknown> = {}) => ({ pipeline: 'generic', validator_roles: ['reviewer'], ...more });

function run(dir: string, ...flags: string[]) {
  return runCli('run', dir, '--module', kModule, ...flags);
}

/** Each task's status and error, and its deps, in file order. */
function outcome(dir: string): string[] {
  return [...readRows(dir).values()].map((row) => `${row.id} [${row.deps}] ${row.status}${row.error === '' ? '' : `: ${row.error}`}`);
}

function registry(dir: string): { artifact_id: string; version: string; validation_status: string; metadata: { task_id: string }; validated_by?: string }[] {
  return (JSON.parse(readFileSync(join(dir, 'artifact-registry.json'), 'utf8')) as { artifacts: never[] }).artifacts;
}

/** X makes artifact `a`; V (a reviewer) validates it; D (no validator) depends on X. */
function pendingSession(validation: 'passed' | 'failed' | undefined): RowInput[] {
  return [
    { id: 'X', description: 'make a', role: 'executor', script: script({ artifact_manifests: [manifest('a', 'X', 'pending')], artifacts: [{ name: 'a', content: 'a' }] }) },
    ...(validation === undefined
      ? []
      : [{ id: 'V', description: 'check a', role: 'reviewer', deps: 'X', script: script({ artifact_validations: [{ artifact_id: 'a', validation_status: validation, validation_summary: `a is ${validation}` }] }) }]),
    { id: 'D', description: 'use a', role: 'worker', deps: 'X' },
  ];
}

describe('validation gating: passed, pending, failed', () => {
  test.each(kSchedules)('%s: pending holds D until the validator passes the artifact; D is wired after the validator', async (schedule) => {
    const dir = buildSession(pendingSession('passed'), { session: session() });
    const result = await run(dir, '--schedule', schedule);
    expect(result.code, result.stderr).toBe(0);
    expect(outcome(dir)).toEqual(['X [] completed', 'V [X] completed', 'D [X;V] completed']);
    expect(readRows(dir).get('D')!.findings).toBe('D done | manifests in: a@1:passed');
    expect(registry(dir).map((entry) => [entry.artifact_id, entry.validation_status, entry.metadata.task_id, entry.validated_by])).toEqual([['a', 'passed', 'X', 'V']]);
  });

  test('passed holds nothing: D starts on X alone, and sees its manifest', async () => {
    const dir = buildSession(
      [
        { id: 'X', description: 'make a', role: 'executor', script: script({ artifact_manifests: [manifest('a', 'X', 'passed')] }) },
        { id: 'D', description: 'use a', role: 'worker', deps: 'X' },
      ],
      { session: session() },
    );
    expect((await run(dir)).code).toBe(0);
    expect(outcome(dir)).toEqual(['X [] completed', 'D [X] completed']);
    expect(readRows(dir).get('D')!.findings).toBe('D done | manifests in: a@1:passed');
  });

  test.each(kSchedules)('%s: pending with no validator: a stall that says only a validation can end it', async (schedule) => {
    const dir = buildSession(pendingSession(undefined), { session: session() });
    const result = await run(dir, '--schedule', schedule);
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('D waits on a validation of the artifacts of X (pending)');
    expect(result.stdout + result.stderr).toContain('Only a validation can end this');
    expect(readRows(dir).get('D')!.status).toBe('pending');
  });

  test.each(kSchedules)('%s: failed: a fix round (the fix, then a recheck) and D after the recheck', async (schedule) => {
    const dir = buildSession(
      [...pendingSession('failed'), { id: 'E', description: 'after the check', role: 'worker', deps: 'V' }],
      { session: session() },
    );
    const result = await run(dir, '--schedule', schedule);
    expect(result.code, result.stderr).toBe(0);
    expect(outcome(dir)).toEqual([
      'X [] completed',
      'V [X] completed',
      'D [V-recheck-1] completed',
      'E [V-recheck-1] completed',
      'X-fix-1 [V] completed',
      'V-recheck-1 [X-fix-1] completed',
    ]);
    const rows = readRows(dir);
    expect(rows.get('X-fix-1')!.description).toMatch(/^Fix the artifact\(s\) a that X made: they failed validation by V \(a: a is failed\)/);
    expect(rows.get('X-fix-1')!.role).toBe('executor');
    expect(rows.get('V-recheck-1')!.role).toBe('reviewer');
    expect(rows.get('D')!.context_from).toBe('X-fix-1;V-recheck-1');
    expect(registry(dir).map((entry) => [entry.artifact_id, entry.version, entry.validation_status, entry.metadata.task_id, entry.validated_by])).toEqual([
      ['a', '2', 'passed', 'X-fix-1', 'V-recheck-1'],
    ]);
  });

  test.each([0, 1, 2])('fix rounds are bounded: max_fix_rounds %i, then D is blocked by the artifact and the run fails', async (rounds) => {
    const dir = buildSession(pendingSession('failed'), { session: session({ max_fix_rounds: rounds }), files: { 'always-fail': '' } });
    const result = await run(dir);
    expect(result.code).toBe(1);
    const rows = readRows(dir);
    const fixes = [...rows.keys()].filter((id) => id.includes('-fix-'));
    expect(fixes).toEqual(Array.from({ length: rounds }, (_, n) => `X-fix-${n + 1}`));
    const maker = rounds === 0 ? 'X' : `X-fix-${rounds}`;
    const summary = rounds === 0 ? 'a is failed' : 'still broken';
    expect(rows.get('D')!.status).toBe('skipped');
    expect(rows.get('D')!.error).toBe(`Blocked by artifact a of ${maker}: ${summary} (after ${rounds} fix round(s), max_fix_rounds)`);
  });

  test('rerun --failed after a block: the producer of the failed artifact makes it again, its validator checks it, and only then the blocked task runs', async () => {
    const dir = buildSession(pendingSession('failed'), { session: session({ max_fix_rounds: 1 }), files: { 'always-fail': '' } });
    expect((await run(dir)).code).toBe(1);
    expect(readRows(dir).get('D')).toMatchObject({ status: 'skipped', error: 'Blocked by artifact a of X-fix-1: still broken (after 1 fix round(s), max_fix_rounds)' });
    // The cause is mended; the rerun must not let D past a gate that still says failed. The
    // fix makes the same artifact again, so without --no-cache the recheck's failed verdict
    // would come from the cache (the file always-fail is no input of the key).
    rmSync(join(dir, 'always-fail'));
    const rerun = await runCli('rerun', dir, '--failed', '--no-cache', '--module', kModule);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(outcome(dir)).toEqual(['X [] completed', 'V [X] completed', 'D [V-recheck-1] completed', 'X-fix-1 [V] completed', 'V-recheck-1 [X-fix-1] completed']);
    expect(readRows(dir).get('V-recheck-1')!.findings).toBe('V-recheck-1 done | manifests in: a@2:pending');
    expect(registry(dir).map((entry) => [entry.artifact_id, entry.validation_status, entry.metadata.task_id, entry.validated_by])).toEqual([['a', 'passed', 'X-fix-1', 'V-recheck-1']]);
    // The run before the rerun chose nothing else: X and V keep their results.
    expect(rerun.stdout).not.toMatch(/\[DONE\] (X|V) /);
  });

  test('a task whose own manifest says failed gets a fix after it, and no recheck', async () => {
    const dir = buildSession(
      [
        { id: 'X', description: 'make a', role: 'executor', script: script({ artifact_manifests: [manifest('a', 'X', 'failed', { validation_summary: 'build broke' })] }) },
        { id: 'D', description: 'use a', role: 'worker', deps: 'X' },
        { id: 'V', description: 'check', role: 'reviewer', deps: 'D' },
      ],
      { session: session() },
    );
    const result = await run(dir);
    // The fix's artifact is pending and D's only validator comes after D: the stall says so.
    expect(result.code).toBe(1);
    expect(outcome(dir).slice(0, 2)).toEqual(['X [] completed', 'D [X-fix-1] pending']);
    expect(result.stdout + result.stderr).toContain('D waits on a validation of the artifacts of X-fix-1 (pending)');
  });
});

describe('manifests and validations refused where they enter', () => {
  const one = (result: Record<string, unknown>) => [{ id: 'X', description: 'x', role: 'executor', script: script(result) }];

  test.each<[string, Record<string, unknown>, string]>([
    ['a path out of the session', { artifact_manifests: [manifest('a', 'X', 'passed', { path: '../../etc/passwd' })] }, 'artifact_manifests.0.path: "../../etc/passwd" climbs out of the session folder (..)'],
    ['an absolute path', { artifact_manifests: [manifest('a', 'X', 'passed', { path: '/etc/passwd' })] }, 'artifact_manifests.0.path: "/etc/passwd" is absolute'],
    ['a path in the engine folder', { artifact_manifests: [manifest('a', 'X', 'passed', { path: '.csv-wave/journal.ndjson' })] }, "is in the engine's folder .csv-wave"],
    ['an unknown status', { artifact_manifests: [manifest('a', 'X', 'ok')] }, 'artifact_manifests.0.validation_status: must be pending, passed, failed, got "ok"'],
    ['a huge list of manifests', { artifact_manifests: Array.from({ length: 21 }, (_, n) => manifest(`a${n}`, 'X', 'passed')) }, 'artifact_manifests: 21 manifests, past the 20 one result may give'],
    ['a huge list of dependencies', { artifact_manifests: [manifest('a', 'X', 'passed', { dependencies: Array.from({ length: 101 }, (_, n) => `d${n}`) })] }, 'artifact_manifests.0.dependencies: names 101 artifacts, past 100'],
    ['a huge list of validations', { artifact_validations: Array.from({ length: 101 }, (_, n) => ({ artifact_id: `a${n}`, validation_status: 'passed' })) }, 'artifact_validations: 101 validations, past the 100 one result may give'],
    ['a summary past its cap', { artifact_manifests: [manifest('a', 'X', 'passed', { validation_summary: 'x'.repeat(2001) })] }, 'artifact_manifests.0.validation_summary: is 2001 characters long, past 2000'],
    ['an id that is no id', { artifact_manifests: [manifest('../a', 'X', 'passed')] }, 'artifact_manifests.0.artifact_id: "../a" is no artifact id'],
    ['another task as the maker', { artifact_manifests: [manifest('a', 'X', 'passed', { metadata: { task_id: 'Y' } })] }, 'artifact_manifests.0.metadata.task_id is "Y"'],
    ['two manifests of one artifact', { artifact_manifests: [manifest('a', 'X', 'passed'), manifest('a', 'X', 'pending')] }, 'artifact_manifests.1: a second manifest of artifact a'],
    ['a verdict on no artifact', { artifact_validations: [{ artifact_id: 'zz', validation_status: 'passed' }] }, 'artifact_validations.0: no artifact zz in artifact-registry.json'],
    ['a route that is no branch', { route: 'a b' }, 'route: "a b" is no branch name'],
  ])('%s: the task fails as invalid output, naming the field; nothing is registered', async (_name, result, message) => {
    const dir = buildSession(one(result), { session: session() });
    const ran = await run(dir);
    expect(ran.code).toBe(1);
    const row = readRows(dir).get('X')!;
    expect(row.status).toBe('failed');
    expect(row.error).toContain(message);
    expect(existsSync(join(dir, 'artifact-registry.json'))).toBe(false);
  });

  test('a path through a symlink out of the session is refused on the main thread', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'csv-wave-outside-'));
    writeFileSync(join(outside, 'secret.md'), 'not the session’s');
    const dir = buildSession(one({ artifact_manifests: [manifest('a', 'X', 'passed', { path: 'links/out/secret.md' })] }), { session: session() });
    mkdirSync(join(dir, 'links'));
    symlinkSync(outside, join(dir, 'links', 'out'));
    expect((await run(dir)).code).toBe(1);
    const row = readRows(dir).get('X')!;
    expect(row.error).toMatch(/^Invalid output: the reply holds a manifest \(artifact_manifests\.0, a\) whose path leads out of the session folder: Refused to read links\/out\/secret\.md/);
  });

  test('a verdict on an artifact of a task that is not upstream, and a second maker of one artifact, are refused', async () => {
    const dir = buildSession(
      [
        { id: 'X', description: 'x', role: 'executor', script: script({ artifact_manifests: [manifest('a', 'X', 'passed')] }) },
        { id: 'Y', description: 'y', role: 'executor', deps: 'X', script: script({ artifact_manifests: [manifest('b', 'Y', 'passed')] }) },
        { id: 'V', description: 'v', role: 'reviewer', deps: 'X', script: script({ artifact_validations: [{ artifact_id: 'b', validation_status: 'passed' }] }) },
        { id: 'Z', description: 'z', role: 'executor', deps: 'X', script: script({ artifact_manifests: [manifest('b', 'Z', 'passed')] }) },
      ],
      { session: session(), files: {} },
    );
    await run(dir, '--concurrency', '1', '--schedule', 'eager');
    const rows = readRows(dir);
    expect(rows.get('V')!.error).toContain('artifact_validations.0: artifact b is Y\'s, which is not upstream of V');
    expect(rows.get('Z')!.error).toContain("artifact_manifests.0: artifact b is Y's, and Y is not upstream of Z: give the artifact another id");
  });
});
