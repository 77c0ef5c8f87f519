import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { buildSession, readRows, type RowInput } from '../helpers/session-builder.js';

const kModule = fileURLToPath(new URL('../fixtures/contract-module.mjs', import.meta.url));
const kSchedules = ['waves', 'eager'] as const;

function run(dir: string, ...flags: string[]) {
  return runCli('run', dir, '--module', kModule, ...flags);
}

const script = (value: unknown) => JSON.stringify(value);

/** PLAN (its findings from `findings`), two IMPLs after it, TEST after them. */
function plan(findings: string, more: Record<string, unknown> = {}): RowInput[] {
  return [
    { id: 'PLAN', description: 'plan', role: 'planner', script: script({ findings, ...more }) },
    { id: 'IMPL-1', description: 'part 1', role: 'executor', deps: 'PLAN' },
    { id: 'IMPL-2', description: 'part 2', role: 'executor', deps: 'PLAN' },
    { id: 'TEST', description: 'test', role: 'tester', deps: 'IMPL-1;IMPL-2' },
  ];
}

const kRules = [
  { id: 'SEC', role: 'security-expert', on: 'PLAN', keywords: ['security', 'vulnerability', 'OWASP'], after: 'PLAN' },
  { id: 'PERF', role: 'performance-optimizer', on: 'PLAN', keywords: ['performance', 'bottleneck'], after: 'IMPL-*' },
  { id: 'DATA', role: 'data-engineer', on: 'PLAN', keywords: ['data', 'ETL', 'schema'], beside: 'IMPL-*' },
];

function outcome(dir: string): string[] {
  return [...readRows(dir).values()].map((row) => `${row.id} [${row.deps}] ${row.status}`);
}

describe('dynamic role injection: keyword rules in session.json', () => {
  test.each(kSchedules)('%s: after and beside: the injected tasks, their deps, what waits on them, and the [INJECT] lines', async (schedule) => {
    const dir = buildSession(plan('Watch the OWASP list; the ETL job is a bottleneck.'), { session: { pipeline: 'generic', topic: 'Shop', inject: kRules } });
    const result = await run(dir, '--schedule', schedule);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[INJECT]'))).toEqual([
      '[INJECT] SEC after PLAN: keyword "OWASP"',
      '[INJECT] PERF after IMPL-*: keyword "bottleneck"',
      '[INJECT] DATA beside IMPL-*: keyword "ETL"',
    ]);
    expect(outcome(dir)).toEqual([
      'PLAN [] completed',
      'IMPL-1 [PLAN;SEC] completed',
      'IMPL-2 [PLAN;SEC] completed',
      'TEST [IMPL-1;IMPL-2;PERF;DATA] completed',
      'SEC [PLAN] completed',
      // Beside the IMPLs: what waited on them (TEST, and PERF, injected after them just before) waits on DATA too.
      'PERF [IMPL-1;IMPL-2;DATA] completed',
      'DATA [PLAN;SEC] completed',
    ]);
    const rows = readRows(dir);
    expect(rows.get('SEC')!.role).toBe('security-expert');
    expect(rows.get('SEC')!.priority).toBe('P2');
    expect(rows.get('SEC')!.description).toContain('[INJECT] SEC after PLAN: keyword "OWASP" in the findings of PLAN');
    expect(rows.get('TEST')!.context_from).toBe('PERF;DATA');
  });

  test('keywords are whole words, any case; the topic counts; no keyword, no task', async () => {
    const dir = buildSession(plan('metadata and htmlish performances'), { session: { pipeline: 'generic', topic: 'A Security review', inject: kRules } });
    const result = await run(dir);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[INJECT]'))).toEqual(['[INJECT] SEC after PLAN: keyword "security"']);
    expect([...readRows(dir).keys()]).toEqual(['PLAN', 'IMPL-1', 'IMPL-2', 'TEST', 'SEC']);
  });

  test('a rule fires once: run again, resumed or rerun, the session keeps one injected task', async () => {
    const dir = buildSession(plan('OWASP'), { session: { pipeline: 'generic', inject: kRules } });
    expect((await run(dir)).code).toBe(0);
    const rerun = await runCli('rerun', dir, '--task', 'PLAN', '--module', kModule);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).not.toContain('[INJECT]');
    expect([...readRows(dir).keys()].filter((id) => id === 'SEC')).toEqual(['SEC']);
    expect(readRows(dir).get('SEC')!.status).toBe('completed');
  });

  test('a pattern that matches no task injects nothing, with a warning', async () => {
    const dir = buildSession(plan('a bottleneck'), { session: { pipeline: 'generic', inject: [{ ...kRules[1], after: 'NOPE-*' }] } });
    const result = await run(dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('injection rule PERF (keyword "bottleneck" in the findings of PLAN): no task matches after NOPE-*, so nothing is injected');
  });

  test.each<[string, unknown, string]>([
    ['no placement', { id: 'SEC', role: 'r', on: 'PLAN', keywords: ['x'] }, 'session.json:6: inject.0.id: give one of after and beside'],
    ['a rule triggered by its own task', { id: 'SEC', role: 'r', on: 'SEC', keywords: ['x'], after: 'PLAN' }, 'session.json:8: inject.0.on: SEC is the task this rule injects'],
    ['an unknown key', { id: 'SEC', role: 'r', on: 'PLAN', keywords: ['x'], after: 'PLAN', when: 'always' }, 'session.json:13: Unknown key: inject.0.when (known keys: id, role, on, keywords, scan, after, beside, title, description, priority)'],
    ['no keyword', { id: 'SEC', role: 'r', on: 'PLAN', keywords: [], after: 'PLAN' }, 'session.json:9: inject.0.keywords:'],
  ])('%s is refused at its line of session.json, before any task', async (_name, rule, message) => {
    const config = JSON.stringify({ pipeline: 'generic', topic: 't', inject: [rule] }, null, 2);
    const dir = buildSession(plan('x'), { session: config });
    const result = await run(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(readRows(dir).get('PLAN')!.status).toBe('');
  });

  test('validate checks the rules as a run does', async () => {
    const config = JSON.stringify({ pipeline: 'generic', topic: 't', inject: [{ id: 'SEC', role: 'r', on: 'SEC', keywords: ['x'], after: 'PLAN' }] }, null, 2);
    const dir = buildSession(plan('x'), { session: config });
    const result = await runCli('validate', dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('session.json:8: inject.0.on: SEC is the task this rule injects');
  });

  test('a role the pipeline does not take is refused at its line', async () => {
    const config = JSON.stringify({ pipeline: 'lifecycle', topic: 't', inject: [{ id: 'SEC', role: 'hacker', on: 'PLAN-001', keywords: ['x'], after: 'PLAN-001' }] }, null, 2);
    const dir = buildSession([{ id: 'PLAN-001', description: 'p', role: 'planner' }], { session: config });
    const result = await run(dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/session\.json:7: inject\.0\.role: the lifecycle pipeline takes analyst, .* not "hacker"/);
  });

  test('rules whose tasks trigger each other stop: each rule injects once, and none fires on its own task', async () => {
    // Every task's findings say "done" (the module's own words): each injected task triggers the next rule.
    const rules = [
      { id: 'A1', role: 'r', on: 'PLAN', keywords: ['done'], after: 'PLAN' },
      { id: 'A2', role: 'r', on: 'A1', keywords: ['done'], after: 'A1' },
      { id: 'A3', role: 'r', on: 'A2', keywords: ['done'], after: 'A2' },
      { id: 'A4', role: 'r', on: 'A3', keywords: ['done'], after: 'A*' },
    ];
    const dir = buildSession([{ id: 'PLAN', description: 'p', role: 'r' }], { session: { pipeline: 'generic', inject: rules } });
    const result = await run(dir);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('[INJECT]'))).toHaveLength(4);
    expect(outcome(dir)).toEqual(['PLAN [] completed', 'A1 [PLAN] completed', 'A2 [A1] completed', 'A3 [A2] completed', 'A4 [A1;A2;A3] completed']);
    const twice = await runCli('run', buildSession([{ id: 'PLAN', description: 'p', role: 'r' }], { session: { pipeline: 'generic', inject: [...rules, rules[0]] } }), '--module', kModule);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('inject.4.id: another rule injects A1 already');
  });
});

describe('conditional routing in a run', () => {
  const routed = (route: string): RowInput[] => [
    { id: 'PLAN', description: 'plan', role: 'planner', script: script({ route }) },
    { id: 'ARCH', description: 'arch', role: 'architect', deps: 'PLAN', branch: 'architecture' },
    { id: 'ORCH', description: 'orch', role: 'orchestrator', deps: 'PLAN;ARCH', branch: 'orchestrated;architecture' },
    { id: 'IMPL', description: 'impl', role: 'executor', deps: 'PLAN;ORCH', branch: 'direct;orchestrated;architecture' },
  ];

  test.each(kSchedules)('%s: the route cell, the skip reason, and the dependents of a skipped task run; exit 0', async (schedule) => {
    const dir = buildSession(routed('direct'), { session: { pipeline: 'generic' } });
    const result = await run(dir, '--schedule', schedule);
    expect(result.code, result.stderr).toBe(0);
    const rows = readRows(dir);
    expect([...rows.values()].map((row) => [row.id, row.status, row.route, row.error])).toEqual([
      ['PLAN', 'completed', 'direct', ''],
      ['ARCH', 'skipped', '', 'Skipped: not chosen (PLAN: direct)'],
      ['ORCH', 'skipped', '', 'Skipped: not chosen (PLAN: direct)'],
      ['IMPL', 'completed', '', ''],
    ]);
    expect(readFileSync(join(dir, 'tasks.csv'), 'utf8').split('\n')[0]).toBe('id,title,description,role,deps,context_from,exec_mode,script,branch,wave,status,findings,error,route');
    expect(result.stdout).toContain('[SKIP] ARCH');
  });

  test('a route none of the dependents is on fails the routing task', async () => {
    const dir = buildSession(routed('turbo'), { session: { pipeline: 'generic' } });
    expect((await run(dir)).code).toBe(1);
    expect(readRows(dir).get('PLAN')!.error).toBe('Invalid route of PLAN: "turbo" is none of the branches its dependents are on (architecture, direct, orchestrated)');
  });

  test('a resume after the route was recorded (a kill before the skips) skips what it did not choose', async () => {
    // As a kill right after PLAN's finish left the session: PLAN completed with its route, the rest pending.
    const rows = routed('orchestrated').map((row) => (row.id === 'PLAN' ? { ...row, status: 'completed', route: 'orchestrated', findings: 'planned' } : row));
    const dir = buildSession(rows, { session: { pipeline: 'generic' } });
    const result = await runCli('resume', dir, '--module', kModule);
    expect(result.code, result.stderr).toBe(0);
    expect([...readRows(dir).values()].map((row) => [row.id, row.status, row.error])).toEqual([
      ['PLAN', 'completed', ''],
      ['ARCH', 'skipped', 'Skipped: not chosen (PLAN: orchestrated)'],
      ['ORCH', 'completed', ''],
      ['IMPL', 'completed', ''],
    ]);
  });
});
