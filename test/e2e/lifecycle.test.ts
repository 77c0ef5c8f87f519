import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { copySample, readRows } from '../helpers/session-builder.js';
import { kScriptedAgentPath } from '../helpers/scripted-agent.js';

const kSample = new URL('../../samples/lifecycle/', import.meta.url);
const kTopic = 'Password reset for a web shop, hardened against the OWASP Top 10';

/** The cells a run decides, per task, in file order: what two runs must agree on. */
export function lifecycleOutcome(dir: string): string[][] {
  return [...readRows(dir).values()].map((row) => [row.id, row.deps, row.context_from, row.wave, row.status, row.route, row.gc_signal, row.findings, row.error]);
}

/** The registry's entries without their times. */
function registry(dir: string): string[] {
  const { artifacts } = JSON.parse(readFileSync(join(dir, 'artifact-registry.json'), 'utf8')) as {
    artifacts: { artifact_id: string; version: string; validation_status: string; path: string; metadata: { task_id: string }; validated_by?: string }[];
  };
  return artifacts.map((entry) => `${entry.artifact_id} v${entry.version} ${entry.validation_status} by ${entry.metadata.task_id} (${entry.validated_by ?? '-'}) at ${entry.path}`);
}

describe('init --template lifecycle', () => {
  test('full: the seed\'s tasks with their priorities, branches and the quality gate', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-lc-')), 'session');
    const init = await runCli('init', dir, '--template', 'lifecycle', '--topic', kTopic);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('Wrote 12 tasks in 9 waves');
    const rows = [...readRows(dir).values()];
    expect(rows.map((row) => [row.id, row.role, row.priority, row.branch, row.exec_mode])).toEqual([
      ['RESEARCH-001', 'analyst', 'P0', '', 'csv-wave'],
      ['DRAFT-001', 'writer', 'P0', '', 'csv-wave'],
      ['DRAFT-002', 'writer', 'P0', '', 'csv-wave'],
      ['DRAFT-003', 'writer', 'P0', '', 'csv-wave'],
      ['QUALITY-001', 'reviewer', 'P1', '', 'interactive'],
      ['PLAN-001', 'planner', 'P0', '', 'csv-wave'],
      ['ARCH-001', 'architect', 'P0', 'architecture', 'csv-wave'],
      ['ORCH-001', 'orchestrator', 'P0', 'orchestrated;architecture', 'csv-wave'],
      ['IMPL-001', 'executor', 'P0', 'direct;orchestrated;architecture', 'csv-wave'],
      ['IMPL-002', 'executor', 'P0', 'direct;orchestrated;architecture', 'csv-wave'],
      ['TEST-001', 'tester', 'P1', '', 'csv-wave'],
      ['REVIEW-001', 'reviewer', 'P1', '', 'csv-wave'],
    ]);
    expect(JSON.parse(readFileSync(join(dir, 'session.json'), 'utf8'))).toEqual({ pipeline: 'lifecycle', topic: kTopic, mode: 'full' });
  });

  test('spec stops after the quality gate; impl starts at PLAN-001 from the given specification, copied into the session', async () => {
    const spec = join(mkdtempSync(join(tmpdir(), 'csv-wave-lc-')), 'session');
    expect((await runCli('init', spec, '--template', 'lifecycle', '--topic', kTopic, '--mode', 'spec')).code).toBe(0);
    expect([...readRows(spec).keys()]).toEqual(['RESEARCH-001', 'DRAFT-001', 'DRAFT-002', 'DRAFT-003', 'QUALITY-001']);

    const file = join(mkdtempSync(join(tmpdir(), 'csv-wave-spec-')), 'reset-spec.md');
    writeFileSync(file, '# Password reset\n');
    const impl = join(mkdtempSync(join(tmpdir(), 'csv-wave-lc-')), 'session');
    const init = await runCli('init', impl, '--template', 'lifecycle', '--topic', kTopic, '--mode', 'impl', '--spec', file);
    expect(init.code, init.stderr).toBe(0);
    const rows = readRows(impl);
    expect([...rows.keys()]).toEqual(['PLAN-001', 'ARCH-001', 'ORCH-001', 'IMPL-001', 'IMPL-002', 'TEST-001', 'REVIEW-001']);
    expect(rows.get('PLAN-001')!.deps).toBe('');
    expect(rows.get('PLAN-001')!.description).toContain('from the specification in spec/reset-spec.md');
    expect(readFileSync(join(impl, 'spec', 'reset-spec.md'), 'utf8')).toBe('# Password reset\n');
  });

  test.each<[string, string[], string]>([
    ['impl without a specification', ['--mode', 'impl'], '--mode impl starts from a specification: pass --spec FILE'],
    ['a specification outside impl', ['--spec', '/etc/hostname'], '--spec goes with --mode impl'],
    ['a brainstorm flag', ['--angles', 'a;b'], '--angles goes with --template brainstorm or analyze, not lifecycle'],
    ['an unknown mode', ['--mode', 'quick'], 'Expected `--mode` to be one of spec, impl, full for the lifecycle pipeline, got `quick`'],
    ['no topic', ['--topic', ''], 'init needs a --topic'],
  ])('%s is refused, writing nothing', async (_name, flags, message) => {
    const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-lc-')), 'session');
    const result = await runCli('init', dir, '--template', 'lifecycle', '--topic', kTopic, ...flags);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('samples/lifecycle end to end with the scripted agent', () => {
  test('the sample\'s scripted agent is samples/brainstorm\'s, and the sample is init\'s own layout', () => {
    expect(readFileSync(new URL('scripted-agent.mjs', kSample), 'utf8')).toBe(readFileSync(kScriptedAgentPath, 'utf8'));
    expect(readdirSync(kSample).sort()).toEqual(['answers.json', 'scripted-agent.mjs', 'session.json', 'tasks.csv']);
  });

  test('every feature in one run: the quality gate from answers.json, an injected role, a route, a failed artifact and its fix', async () => {
    const dir = copySample('lifecycle');
    const result = await runCli('run', dir, '--answers', join(dir, 'answers.json'));
    expect(result.code, result.stderr).toBe(0);
    const marked = result.stdout.split('\n').filter((line) => /^\[(GATE|INJECT|SKIP)\]/.test(line));
    expect(marked).toEqual([
      '[GATE] QUALITY-001: improve traceability (from answers.json)',
      '[GATE] QUALITY-002: resume (from answers.json)',
      '[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP"',
      expect.stringMatching(/^\[SKIP\] ARCH-001 \(wave 8, [\d.]+s\) -> Skipped: not chosen \(PLAN-001: orchestrated\)$/),
    ]);
    const rows = readRows(dir);
    expect([...rows.values()].map((row) => `${row.id} ${row.status} [${row.deps}]`)).toEqual([
      'RESEARCH-001 completed []',
      'DRAFT-001 completed [RESEARCH-001]',
      'DRAFT-002 completed [RESEARCH-001]',
      'DRAFT-003 completed [RESEARCH-001]',
      'QUALITY-001 completed [DRAFT-001;DRAFT-002;DRAFT-003]',
      'PLAN-001 completed [DRAFT-001;DRAFT-002;DRAFT-003;QUALITY-002]',
      'ARCH-001 skipped [PLAN-001;SECURITY-001]',
      'ORCH-001 completed [PLAN-001;ARCH-001;SECURITY-001]',
      'IMPL-001 completed [PLAN-001;ORCH-001;SECURITY-001]',
      'IMPL-002 completed [PLAN-001;ORCH-001;SECURITY-001]',
      'TEST-001 completed [IMPL-001;IMPL-002]',
      'REVIEW-001 completed [TEST-001-recheck-1]',
      'IMPROVE-001 completed [QUALITY-001]',
      'QUALITY-002 completed [IMPROVE-001]',
      'SECURITY-001 completed [PLAN-001]',
      'IMPL-001-fix-1 completed [TEST-001]',
      'TEST-001-recheck-1 completed [IMPL-001-fix-1]',
    ]);
    expect(rows.get('PLAN-001')!.route).toBe('orchestrated');
    expect(rows.get('QUALITY-001')!.gc_signal).toBe('IMPROVE');
    expect(rows.get('QUALITY-001')!.severity_summary).toBe('completeness:85 consistency:80 traceability:55 depth:78 coverage:81');
    expect(rows.get('SECURITY-001')!.description).toContain('[INJECT] SECURITY-001 after PLAN-001: keyword "OWASP" in the topic');
    expect(registry(dir)).toEqual([
      'architecture-and-epics v1 passed by DRAFT-003 (QUALITY-002) at artifacts/DRAFT-003/architecture-and-epics.md',
      'code-impl-001 v2 passed by IMPL-001-fix-1 (TEST-001-recheck-1) at artifacts/IMPL-001-fix-1/code-impl-001.md',
      'code-impl-002 v1 passed by IMPL-002 (TEST-001) at artifacts/IMPL-002/code-impl-002.md',
      'product-brief v1 passed by DRAFT-001 (QUALITY-002) at artifacts/DRAFT-001/product-brief.md',
      'requirements v1 passed by DRAFT-002 (QUALITY-002) at artifacts/DRAFT-002/requirements.md',
      'test-report-test-001 v1 passed by TEST-001 (-) at artifacts/TEST-001/test-report-test-001.md',
      'test-report-test-001-recheck-1 v1 passed by TEST-001-recheck-1 (-) at artifacts/TEST-001-recheck-1/test-report-test-001-recheck-1.md',
    ]);
    const quality = readFileSync(join(dir, 'quality.md'), 'utf8');
    expect(quality).toContain('Action: improve traceability (from answers.json)');
    expect(quality).toContain('Action: resume (from answers.json)');
    // The sample in the repository is as it was; run again, the session does nothing.
    expect(readFileSync(new URL('tasks.csv', kSample), 'utf8')).not.toContain('completed');
    const again = await runCli('run', dir, '--answers', join(dir, 'answers.json'));
    expect(again.code).toBe(0);
    expect(again.stdout).not.toMatch(/\[(GATE|INJECT|DONE)\]/);
  });

  test('the same results under --schedule waves and eager', async () => {
    const waves = copySample('lifecycle');
    const eager = copySample('lifecycle');
    expect((await runCli('run', waves, '--schedule', 'waves', '--answers', join(waves, 'answers.json'))).code).toBe(0);
    expect((await runCli('run', eager, '--schedule', 'eager', '--answers', join(eager, 'answers.json'))).code).toBe(0);
    expect(lifecycleOutcome(eager)).toEqual(lifecycleOutcome(waves));
    expect(registry(eager)).toEqual(registry(waves));
  });

  test('--auto: the gate improves the weakest dimension, then resumes when the recheck passes the threshold', async () => {
    const dir = copySample('lifecycle');
    const result = await runCli('run', dir, '--auto');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[GATE]'))).toEqual([
      '[GATE] QUALITY-001: improve traceability (from --auto)',
      '[GATE] QUALITY-002: resume (from --auto)',
    ]);
  });

  test('a copied session folder goes on in its copy: its registry names paths of its own, and the original stays as it was', async () => {
    const dir = copySample('lifecycle');
    writeFileSync(join(dir, 'first.json'), '["improve traceability"]');
    // The second quality check finds no answer left: it fails, and the run stops after the specification.
    const first = await runCli('run', dir, '--answers', join(dir, 'first.json'));
    expect(first.code).toBe(1);
    expect(readRows(dir).get('QUALITY-002')!.error).toMatch(/has no answer left \(1 used\) for: QUALITY-002/);
    const copy = join(mkdtempSync(join(tmpdir(), 'csv-wave-lc-copy-')), 'session');
    cpSync(dir, copy, { recursive: true });
    const before = readFileSync(join(dir, 'artifact-registry.json'), 'utf8');
    writeFileSync(join(copy, 'second.json'), '["resume"]');
    const resumed = await runCli('rerun', copy, '--failed', '--answers', join(copy, 'second.json'));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readRows(copy).get('REVIEW-001')!.status).toBe('completed');
    expect(readFileSync(join(dir, 'artifact-registry.json'), 'utf8')).toBe(before);
    expect(readFileSync(join(copy, 'artifact-registry.json'), 'utf8')).not.toContain(dir);
    expect(readRows(dir).get('REVIEW-001')!.status).toBe('skipped');
  });
});
