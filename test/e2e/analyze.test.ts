import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { readRows } from '../helpers/session-builder.js';
import { countRuns, kLogRun } from '../helpers/runs-log.js';
import { kScriptedAgentCmd } from '../helpers/scripted-agent.js';

/** `init` an analyze session run by the scripted agent; returns its folder. */
async function analyzeSession(mode: string, ...initFlags: string[]): Promise<string> {
  const dir = join(mkdtempSync(join(tmpdir(), 'csv-wave-e2e-')), 'session');
  const init = await runCli(
    'init', dir, '--template', 'analyze', '--topic', 'Moving the build to a monorepo', '--mode', mode,
    '--cmd', `${kLogRun}; ${kScriptedAgentCmd}`, ...initFlags,
  );
  expect(init.code, init.stderr).toBe(0);
  return dir;
}

/** The entries of discussion.md: round, timestamp and text of each decision. */
function discussionEntries(dir: string): { round: number; at: string; text: string }[] {
  const text = readFileSync(join(dir, 'discussion.md'), 'utf8');
  return [...text.matchAll(/^### Round (\d+) - (\S+)\n\n(.*)\n/gm)].map((match) => ({
    round: Number(match[1]),
    at: match[2]!,
    text: match[3]!,
  }));
}

const kBase = ['EXPLORE-001', 'EXPLORE-002', 'EXPLORE-003', 'ANALYZE-001', 'ANALYZE-002', 'ANALYZE-003'];

describe('analyze end to end (scripted agent)', () => {
  test('deep mode with --answers: Continue adds a round, Adjust a supplementary analysis and a round, Done ends', async () => {
    const dir = await analyzeSession('deep');
    const answers = join(dir, '..', 'answers.json');
    writeFileSync(answers, JSON.stringify(['Continue deeper', { decision: 'Adjust direction', focus: 'build cache costs' }, 'Done']));
    const run = await runCli('run', dir, '--answers', answers);
    expect(run.code, run.stderr).toBe(0);
    // Each gate's answer is printed, with where it came from.
    expect(run.stdout.split('\n').filter((line) => line.startsWith('[GATE]'))).toEqual([
      '[GATE] DISCUSS-001: Continue deeper (from answers.json)',
      '[GATE] DISCUSS-002: Adjust direction: build cache costs (from answers.json)',
      '[GATE] DISCUSS-003: Done (from answers.json)',
    ]);

    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual([...kBase, 'DISCUSS-001', 'SYNTH-001', 'DISCUSS-002', 'ANALYZE-fix-2', 'DISCUSS-003']);
    for (const row of rows.values()) expect(row.status, row.id).toBe('completed');
    expect(rows.get('DISCUSS-002')).toMatchObject({ role: 'discussant', exec_mode: 'interactive', deps: 'DISCUSS-001' });
    expect(rows.get('ANALYZE-fix-2')).toMatchObject({ role: 'analyst', angle: 'build cache costs', deps: 'DISCUSS-002' });
    expect(rows.get('DISCUSS-003')).toMatchObject({
      role: 'discussant',
      exec_mode: 'interactive',
      deps: 'ANALYZE-fix-2',
      context_from: 'DISCUSS-002;ANALYZE-fix-2',
    });
    expect(rows.get('DISCUSS-003')!.description).toContain('build cache costs');
    // The synthesizer follows the last discussion, and hears every one of them.
    expect(rows.get('SYNTH-001')!.deps).toBe('DISCUSS-003');
    expect(rows.get('SYNTH-001')!.context_from.split(';')).toEqual(
      expect.arrayContaining(['DISCUSS-001', 'DISCUSS-002', 'DISCUSS-003']),
    );
    expect(Number(rows.get('SYNTH-001')!.wave)).toBeGreaterThan(Number(rows.get('DISCUSS-003')!.wave));

    const entries = discussionEntries(dir);
    expect(entries.map(({ round, text }) => [round, text])).toEqual([
      [1, 'Continue deeper'],
      [2, 'Adjust direction: build cache costs'],
      [3, 'Done'],
    ]);
    for (const { at } of entries) expect(Number.isNaN(Date.parse(at)), at).toBe(false);

    // Each discussion leaves its decision in interactive/<id>-result.json.
    const decisions = ['DISCUSS-001', 'DISCUSS-002', 'DISCUSS-003'].map((id) => {
      const { timestamp, answers, ...result } = JSON.parse(readFileSync(join(dir, 'interactive', `${id}-result.json`), 'utf8')) as Record<string, unknown>;
      expect(Number.isNaN(Date.parse(String(timestamp)))).toBe(false);
      // How far the answers file was read: a resume goes on from there.
      expect(answers).toMatchObject({ file: expect.any(String), sha256: expect.stringMatching(/^[0-9a-f]{64}$/), next: expect.any(Number) });
      return result;
    });
    expect(decisions).toEqual([
      { task_id: 'DISCUSS-001', status: 'completed', round: 1, decision: 'continue' },
      { task_id: 'DISCUSS-002', status: 'completed', round: 2, decision: 'adjust', focus: 'build cache costs' },
      { task_id: 'DISCUSS-003', status: 'completed', round: 3, decision: 'done' },
    ]);
  });

  test('standard mode asks nothing: its round limit is 1', async () => {
    const dir = await analyzeSession('standard');
    // No --answers, no --auto and no terminal: a question would fail the discussion task.
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual([...kBase, 'DISCUSS-001', 'SYNTH-001']);
    for (const row of rows.values()) expect(row.status, row.id).toBe('completed');
    expect(rows.get('SYNTH-001')!.deps).toBe('DISCUSS-001');
    expect(discussionEntries(dir).map(({ round, text }) => [round, text])).toEqual([
      [1, 'Round limit 1 of standard mode reached: on to synthesis'],
    ]);
    expect(run.stdout).toContain('[GATE] DISCUSS-001: Done (from the round limit of standard mode, 1)\n');
  });

  test('quick mode has no discussion task at all', async () => {
    const dir = await analyzeSession('quick');
    const run = await runCli('run', dir);
    expect(run.code, run.stderr).toBe(0);
    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual([...kBase, 'SYNTH-001']);
    expect([...rows.values()].filter((row) => row.exec_mode === 'interactive')).toEqual([]);
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'ANALYZE-001;ANALYZE-002;ANALYZE-003' });
    expect(existsSync(join(dir, 'discussion.md'))).toBe(false);
  });

  test('--auto answers Done', async () => {
    const dir = await analyzeSession('deep');
    const run = await runCli('run', dir, '--auto');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('[GATE] DISCUSS-001: Done (from --auto)\n');
    const rows = readRows(dir);
    expect([...rows.keys()]).toEqual([...kBase, 'DISCUSS-001', 'SYNTH-001']);
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'completed', deps: 'DISCUSS-001' });
    expect(discussionEntries(dir).map(({ round, text }) => [round, text])).toEqual([[1, 'Done']]);
  });

  test('with neither answers nor a terminal, the discussion task fails saying how to answer, and the run exits 1', async () => {
    const dir = await analyzeSession('deep');
    const run = await runCli('run', dir);
    expect(run.code).toBe(1);
    const rows = readRows(dir);
    expect(rows.get('DISCUSS-001')!.status).toBe('failed');
    expect(rows.get('DISCUSS-001')!.error).toMatch(/--answers FILE/);
    expect(rows.get('DISCUSS-001')!.error).toMatch(/--auto/);
    expect(rows.get('SYNTH-001')).toMatchObject({ status: 'skipped', error: 'Dependency failed or skipped: DISCUSS-001 (failed)' });
    expect([...rows.keys()]).toEqual([...kBase, 'DISCUSS-001', 'SYNTH-001']);
  });
});

describe('exploration cache', () => {
  /** Two perspectives that normalise to the same kebab-case key, `cost-model`. */
  const kPerspectives = 'Cost Model;cost_model';

  test('a second explorer of the same angle reuses the first exploration instead of running', async () => {
    const dir = await analyzeSession('quick', '--perspectives', kPerspectives);
    // One task at a time: the first exploration is stored before the second one starts.
    const run = await runCli('run', dir, '--concurrency', '1');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/EXPLORE-002 reused the exploration of EXPLORE-001/);

    const runs = countRuns(dir);
    expect(runs.get('EXPLORE-001')).toBe(1);
    expect(runs.has('EXPLORE-002')).toBe(false);
    const rows = readRows(dir);
    expect(rows.get('EXPLORE-002')).toMatchObject({ status: 'completed', findings: rows.get('EXPLORE-001')!.findings });
    expect(rows.get('ANALYZE-002')!.status).toBe('completed');

    const index = JSON.parse(readFileSync(join(dir, 'explorations', 'cache-index.json'), 'utf8')) as { entries: unknown[] };
    expect(index.entries).toEqual([
      expect.objectContaining({ angle: 'cost-model', file: 'explore-cost-model.json', created_by: 'EXPLORE-001' }),
    ]);
    const cached = JSON.parse(readFileSync(join(dir, 'explorations', 'explore-cost-model.json'), 'utf8')) as Record<string, unknown>;
    expect(cached).toMatchObject({ angle: 'Cost Model', task_id: 'EXPLORE-001', findings: rows.get('EXPLORE-001')!.findings });
  });

  // Both explorers sit in wave 1 and start together: the second waits for the first.
  test('…also when both explorers are in the same wave and could start together', async () => {
    const dir = await analyzeSession('quick', '--perspectives', kPerspectives);
    const run = await runCli('run', dir, '--concurrency', '4');
    expect(run.code, run.stderr).toBe(0);
    const runs = countRuns(dir);
    // Whichever of the two started first explores; the other one waits for it and reuses it.
    expect((runs.get('EXPLORE-001') ?? 0) + (runs.get('EXPLORE-002') ?? 0)).toBe(1);
  });
});
